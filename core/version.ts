// The package's version, as the service reports it (health, MCP server info, outbound
// User-Agent) and the paying MCP bridge introduces itself.
export const VERSION = '0.1.0';
