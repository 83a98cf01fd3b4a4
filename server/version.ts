// Still imported from here by server/plugins/mcp.ts (being edited elsewhere); new code imports
// core/version.js, which the paying MCP bridge shares. Remove once it has.
export { VERSION } from '../core/version.js';
