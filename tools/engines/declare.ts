// What every engine module declares (declareEngine), for the boot check (server/engines.ts
// reads these declarations through ./index.ts) and for the operations, which name the commands
// they need: each engine says which commands it runs and which Debian package provides them
// (system-packages.txt, read by the Dockerfile and bin/setup.mjs, lists the same packages).

export interface EngineDeclaration<Command extends string = string> {
  /** The engine's name as the code and the docs speak of it. */
  name: string;
  /** The programs it runs, as found on PATH; the boot check looks for each. */
  commands: readonly Command[];
  /** The Debian package that installs them. */
  package: string;
}

/** Keeps the commands' literal types, so operations can be checked against them. */
export function declareEngine<const Command extends string>(engine: EngineDeclaration<Command>): EngineDeclaration<Command> {
  return engine;
}
