//! The chain's id, asked of the node once: it never changes under a running process.

use std::sync::OnceLock;

use ports::{ChainError, ChainWriter};

#[derive(Debug, Default)]
pub(crate) struct KnownChainId(OnceLock<u64>);

impl KnownChainId {
    /// The id of `chain`, asked the first time only.
    pub(crate) async fn of(&self, chain: &dyn ChainWriter) -> Result<u64, ChainError> {
        if let Some(id) = self.0.get() {
            return Ok(*id);
        }
        let id = chain.chain_id().await?;
        Ok(*self.0.get_or_init(|| id))
    }
}
