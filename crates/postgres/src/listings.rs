//! Where a listing stands: the count of changes to its rows that the triggers of migration 000012
//! keep in `listing_versions`.

use diesel::prelude::*;
use diesel_async::RunQueryDsl;
use ports::{Listing, ListingVersion, StoreError};

use crate::database::Database;
use crate::errors::from_diesel;
use crate::schema::listing_versions;

pub(crate) async fn listing_version(
    database: &Database,
    listing: Listing,
) -> Result<ListingVersion, StoreError> {
    let owner = match listing {
        Listing::Inbox(inbox) => inbox.0,
        Listing::Intents(agent) => agent.0,
        Listing::Policy(wallet) => wallet.0,
    };
    let mut connection = database.read_connection().await?;
    let changes = listing_versions::table
        .find(owner)
        .select(listing_versions::version)
        .first::<i64>(&mut connection)
        .await
        .optional()
        .map_err(from_diesel)?;
    // No row: nothing has changed since the count began.
    Ok(ListingVersion {
        listing,
        changes: changes.unwrap_or(0),
    })
}
