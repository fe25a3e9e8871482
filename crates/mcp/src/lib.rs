//! The Model Context Protocol transport of agent-runtime: `/mcp`, the runtime's use cases as
//! tools for a language model, over Streamable HTTP on the official SDK (rmcp), stateless, in
//! the same actix-web server as `/v1`. Each tool calls the use case of its REST route with the
//! same command; refusals read as the route's.

mod answers;
mod arguments;
mod hosts;
mod tools;
mod transport;

pub use arguments::MAX_TOOL_WAIT_SECS;
pub use hosts::{AllowedHosts, HostRefusal};
pub use tools::{tool_catalog, PROTOCOL_VERSIONS};
pub use transport::{serve, McpEndpoint, McpSettings, MCP_PATH};
