// The Kubernetes manifests in deploy/k8s, checked offline: every object against the Kubernetes
// API schemas (kubernetes-models' validators), then the properties the service depends on.
import Lab from '@hapi/lab';
import Code from '@hapi/code';
import { readFile, readdir } from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseAllDocuments } from 'yaml';
import { ConfigMap, Secret, Service } from 'kubernetes-models/v1';
import { Deployment, StatefulSet } from 'kubernetes-models/apps/v1';
import { HorizontalPodAutoscaler } from 'kubernetes-models/autoscaling/v2';
import { PodDisruptionBudget } from 'kubernetes-models/policy/v1';
import { NetworkPolicy } from 'kubernetes-models/networking.k8s.io/v1';
import { loadConfig } from '../../server/config.js';

export const lab = Lab.script();
const { describe, it, before } = lab;
const { expect } = Code;

const projectRoot = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../..');
const k8sDir = path.join(projectRoot, 'deploy/k8s');

interface Manifest {
  file: string; apiVersion: string; kind: string; metadata: { name: string; labels?: Record<string, string> };
  [key: string]: unknown;
}

// What each apiVersion/kind is checked against; anything else in deploy/k8s is an error.
const models: Record<string, new (data: never) => { validate(): void }> = {
  'v1/ConfigMap': ConfigMap,
  'v1/Secret': Secret,
  'v1/Service': Service,
  'apps/v1/Deployment': Deployment,
  'apps/v1/StatefulSet': StatefulSet,
  'autoscaling/v2/HorizontalPodAutoscaler': HorizontalPodAutoscaler,
  'policy/v1/PodDisruptionBudget': PodDisruptionBudget,
  'networking.k8s.io/v1/NetworkPolicy': NetworkPolicy,
};

function validationError(doc: Manifest): string | undefined {
  const Model = models[`${doc.apiVersion}/${doc.kind}`];
  if (!Model) return `${doc.apiVersion} ${doc.kind} is not a known kind`;
  try {
    new Model(doc as never).validate();
    return undefined;
  } catch (err) {
    return (err as Error).message;
  }
}

/** A Kubernetes quantity in base units (bytes or cores). */
function quantity(value: string | number): number {
  const m = /^(\d+(?:\.\d+)?)(m|Ki|Mi|Gi|Ti|k|M|G|T)?$/.exec(String(value));
  if (!m) throw new Error(`not a quantity: ${value}`);
  const scale: Record<string, number> = { m: 1e-3, Ki: 2 ** 10, Mi: 2 ** 20, Gi: 2 ** 30, Ti: 2 ** 40, k: 1e3, M: 1e6, G: 1e9, T: 1e12 };
  return Number(m[1]) * (m[2] ? scale[m[2]] : 1);
}

async function parseFile(file: string): Promise<Manifest[]> {
  const docs = parseAllDocuments(await readFile(path.join(k8sDir, file), 'utf8'));
  return docs.map((doc) => {
    if (doc.errors.length) throw new Error(`${file}: ${doc.errors[0].message}`);
    return { ...(doc.toJS() as Manifest), file };
  }).filter((doc) => doc.kind !== undefined);
}

type Container = {
  name: string; ports?: Array<{ name?: string; containerPort: number }>;
  envFrom?: Array<{ configMapRef?: { name: string }; secretRef?: { name: string } }>;
  resources: { requests: Record<string, string>; limits: Record<string, string> };
  volumeMounts: Array<{ name: string; mountPath: string }>;
  readinessProbe?: { httpGet?: { path: string; port: string | number } };
  livenessProbe?: { httpGet?: { path: string; port: string | number } };
  lifecycle?: { preStop?: { exec?: { command: string[] } } };
  args?: string[];
};
type PodSpec = {
  terminationGracePeriodSeconds?: number; containers: Container[];
  volumes?: Array<{ name: string; emptyDir?: { medium?: string; sizeLimit?: string } }>;
};
type Workload = Manifest & {
  spec: { selector: { matchLabels: Record<string, string> }; template: { metadata: { labels: Record<string, string> }; spec: PodSpec } };
};

describe('Kubernetes manifests (deploy/k8s)', () => {
  let files: string[];
  let all: Manifest[];
  const one = <T extends Manifest>(kind: string, name?: string): T => {
    const found = all.filter((d) => d.kind === kind && (name === undefined || d.metadata.name === name));
    expect(found.length, `${kind} ${name ?? ''}`).to.equal(1);
    return found[0] as T;
  };
  const matches = (selector: Record<string, string>, labels: Record<string, string>) =>
    Object.entries(selector).every(([k, v]) => labels[k] === v);

  before(async () => {
    files = (await readdir(k8sDir)).filter((f) => f.endsWith('.yaml')).sort();
    all = [];
    for (const file of files.filter((f) => f !== 'kustomization.yaml')) all.push(...await parseFile(file));
  });

  it('every object is valid against the Kubernetes API schemas', () => {
    expect(all.length).to.be.above(8);
    const problems = all.map((doc) => [doc.file, doc.kind, doc.metadata?.name, validationError(doc)])
      .filter(([, , , error]) => error !== undefined);
    expect(problems).to.equal([]);
    const kinds = new Set(all.map((d) => d.kind));
    for (const kind of ['Deployment', 'Service', 'HorizontalPodAutoscaler', 'PodDisruptionBudget', 'ConfigMap', 'Secret', 'StatefulSet']) expect(kinds.has(kind), kind).to.equal(true);
  });

  it('the validator refuses a broken copy (a probe without a port, a CPU of "two", replicas as text)', () => {
    const deployment = one<Workload>('Deployment', 'paydoc');
    const broken = structuredClone(deployment);
    delete (broken.spec.template.spec.containers[0].readinessProbe!.httpGet as { port?: unknown }).port;
    expect(validationError(broken)).to.contain('port');
    const badCpu = structuredClone(deployment);
    badCpu.spec.template.spec.containers[0].resources.limits.cpu = 'two';
    expect(validationError(badCpu)).to.contain('quantity');
    const badReplicas = structuredClone(deployment) as Workload & { spec: { replicas: unknown } };
    badReplicas.spec.replicas = '2';
    expect(validationError(badReplicas)).to.contain('integer');
  });

  it('kustomization.yaml applies every manifest except the Secret template', async () => {
    const [kustomization] = parseAllDocuments(await readFile(path.join(k8sDir, 'kustomization.yaml'), 'utf8')).map((d) => d.toJS() as { resources: string[] });
    expect([...kustomization.resources].sort()).to.equal(files.filter((f) => f !== 'kustomization.yaml' && f !== 'secret.example.yaml'));
  });

  it('the ConfigMap is a valid service configuration with REDIS_URL pointing at the Redis Service', async () => {
    const config = one<Manifest & { data: Record<string, string> }>('ConfigMap').data;
    const source = await readFile(path.join(projectRoot, 'server/config.ts'), 'utf8');
    for (const key of Object.keys(config)) expect(source, key).to.contain(`env: '${key}'`);
    const loaded = loadConfig({}, config);
    expect(loaded.payments).to.equal('live');
    const redisUrl = new URL(loaded.redisUrl);
    const redisService = one<Manifest & { spec: { ports: Array<{ port: number }> } }>('Service', redisUrl.hostname);
    expect(redisService.spec.ports.map((p) => p.port)).to.include(Number(redisUrl.port));
    // A claim must never be evicted to make room: a full Redis refuses writes (503) instead.
    const redis = one<Workload>('StatefulSet', redisUrl.hostname);
    const args = redis.spec.template.spec.containers[0].args!;
    expect(args[args.indexOf('--maxmemory-policy') + 1]).to.equal('noeviction');

    const secret = one<Manifest & { stringData: Record<string, string> }>('Secret');
    for (const key of Object.keys(secret.stringData)) expect(source, key).to.match(new RegExp(`env: '${key}', sensitive: true`));
  });

  it('the Deployment: probes on /v1/health, jobs on a memory-backed volume at TMP_DIR, resources matched to WORKERS', () => {
    const config = one<Manifest & { data: Record<string, string> }>('ConfigMap');
    const deployment = one<Workload>('Deployment', 'paydoc');
    const pod = deployment.spec.template.spec;
    expect(matches(deployment.spec.selector.matchLabels, deployment.spec.template.metadata.labels)).to.equal(true);
    const [container] = pod.containers;
    expect(container.envFrom?.map((e) => e.configMapRef?.name)).to.include(config.metadata.name);

    const http = container.ports!.find((p) => p.name === 'http')!;
    expect(http.containerPort).to.equal(Number(config.data.PORT));
    for (const probe of [container.readinessProbe, container.livenessProbe]) {
      expect(probe?.httpGet?.path).to.equal('/v1/health');
      expect(probe?.httpGet?.port).to.equal('http');
    }

    const jobs = pod.volumes!.find((v) => v.emptyDir?.medium === 'Memory')!;
    expect(jobs).to.exist();
    expect(quantity(jobs.emptyDir!.sizeLimit!)).to.be.above(0);
    const mount = container.volumeMounts.find((m) => m.name === jobs.name)!;
    expect(config.data.TMP_DIR.startsWith(`${mount.mountPath.replace(/\/$/, '')}/`)).to.equal(true);

    const workers = Number(config.data.WORKERS);
    expect(workers).to.be.above(0);
    const { requests, limits } = container.resources;
    expect(quantity(requests.cpu)).to.equal(workers);
    expect(quantity(limits.cpu)).to.equal(workers);
    // tmpfs pages are charged to the container: the limit holds the job volume and the workers.
    expect(quantity(limits.memory)).to.be.at.least(quantity(jobs.emptyDir!.sizeLimit!) + workers * 0.75 * 2 ** 30);
    expect(quantity(requests.memory)).to.be.at.most(quantity(limits.memory));
  });

  it('shutdown outlasts the longest job: grace period > preStop + job timeout + settlement', () => {
    const config = one<Manifest & { data: Record<string, string> }>('ConfigMap').data;
    const pod = one<Workload>('Deployment', 'paydoc').spec.template.spec;
    const preStop = pod.containers[0].lifecycle?.preStop?.exec?.command ?? [];
    expect(preStop[0]).to.equal('sleep');
    const preStopSeconds = Number(preStop[1]);
    expect(preStopSeconds).to.be.above(0);
    const jobTimeoutSeconds = Math.max(Number(config.JOB_TIMEOUT_MS), loadConfig({}, {}).jobTimeoutMs) / 1000;
    const settlementSeconds = 30;
    expect(pod.terminationGracePeriodSeconds!).to.be.above(preStopSeconds + jobTimeoutSeconds + settlementSeconds);
  });

  it('the HPA scales the Deployment on CPU, the PDB and the Service select its pods', () => {
    const deployment = one<Workload>('Deployment', 'paydoc');
    const podLabels = deployment.spec.template.metadata.labels;
    const hpa = one<Manifest & { spec: { scaleTargetRef: { kind: string; name: string }; minReplicas: number; metrics: Array<{ type: string; resource?: { name: string; target: { type: string } } }> } }>('HorizontalPodAutoscaler');
    expect(hpa.spec.scaleTargetRef).to.include({ kind: 'Deployment', name: 'paydoc' });
    expect(hpa.spec.minReplicas).to.be.at.least(2);
    expect(hpa.spec.metrics.some((m) => m.type === 'Resource' && m.resource?.name === 'cpu' && m.resource.target.type === 'Utilization')).to.equal(true);

    const pdb = one<Manifest & { spec: { selector: { matchLabels: Record<string, string> }; maxUnavailable?: number; minAvailable?: number } }>('PodDisruptionBudget');
    expect(matches(pdb.spec.selector.matchLabels, podLabels)).to.equal(true);
    expect(pdb.spec.maxUnavailable ?? 0).to.be.below(hpa.spec.minReplicas);

    const service = one<Manifest & { spec: { selector: Record<string, string>; ports: Array<{ targetPort: string }> } }>('Service', 'paydoc');
    expect(matches(service.spec.selector, podLabels)).to.equal(true);
    expect(service.spec.ports[0].targetPort).to.equal('http');
    // The Redis pods are not selected by the API Service, and the reverse.
    const redis = one<Workload>('StatefulSet', 'paydoc-redis');
    expect(matches(service.spec.selector, redis.spec.template.metadata.labels)).to.equal(false);
  });
});
