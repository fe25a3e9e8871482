//! The schema stays ready to be distributed by agent (decision 0091), read from the migrated
//! catalog: every table of agent data carries `agent_id`, every primary key, unique constraint
//! and unique index of it includes that column, every foreign key between two of them pairs it
//! with the other's, so that no row and no constraint spans two agents, and none refers to a
//! table that would stay on the coordinator. The tables that are not agent data are listed in
//! `NOT_BY_AGENT`, each with why and where it would go, as `docs/operations.md` ("Past one
//! primary") says.

use std::collections::{BTreeMap, BTreeSet};

use diesel::sql_types::{Array, Text};
use diesel::QueryableByName;
use diesel_async::{AsyncPgConnection, RunQueryDsl, SimpleAsyncConnection};
use test_support::{workspace_root, TestDatabase};

/// The column a table of agent data is distributed by.
const AGENT_COLUMN: &str = "agent_id";

/// The agents' own table is distributed by its `id`: the value every `agent_id` holds, so an
/// agent's row and the rows of its data share a shard.
const AGENTS: (&str, &str) = ("agents", "id");

/// diesel's record of the migrations applied: not the service's data.
const MIGRATIONS_TABLE: &str = "__diesel_schema_migrations";

/// Where a table that is not distributed by agent goes in a distributed layout.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Placement {
    /// A copy on every node: read beside agent data, or looked up before the agent is known.
    Reference,
    /// On the coordinator alone: never read in one query with agent data.
    Coordinator,
}

/// A table that is not agent data, why, and where it would go.
#[derive(Clone, Copy)]
struct NotByAgent {
    table: &'static str,
    placement: Placement,
    why: &'static str,
}

const fn reference(table: &'static str, why: &'static str) -> NotByAgent {
    NotByAgent {
        table,
        placement: Placement::Reference,
        why,
    }
}

const fn coordinator(table: &'static str, why: &'static str) -> NotByAgent {
    NotByAgent {
        table,
        placement: Placement::Coordinator,
        why,
    }
}

const NOT_BY_AGENT: &[NotByAgent] = &[
    reference(
        "sponsors",
        "a sponsor has many agents, and its name is unique across them; every agent's row \
         refers to its sponsor",
    ),
    reference(
        "agent_keys",
        "a request's key is found by its hash before its agent is known (unique across \
         agents); written when keys are made or revoked, and `last_used_at` at most once a \
         minute per key",
    ),
    reference(
        "phone_numbers",
        "an inbound SMS finds its number, and so its agent, by the phone number, unique across \
         agents",
    ),
    reference(
        "email_inboxes",
        "an inbound mail finds its inbox, and so its agent, by the address, unique across \
         agents",
    ),
    reference(
        "wallet_addresses",
        "no two agents may hold one wallet address: the uniqueness that a wallet's own shard \
         cannot check",
    ),
    reference(
        "email_domains",
        "the domains the service hands inboxes out on, shared by every agent",
    ),
    reference(
        "chain_heads",
        "the latest block seen of each chain, shared by every agent's payments",
    ),
    reference(
        "every_agent_watch",
        "one row: whether an operator's list follows every agent's events, read as each event \
         is recorded",
    ),
    reference(
        "operators",
        "the console's operators, read beside an intent's approvals",
    ),
    coordinator(
        "operator_enrollments",
        "an operator's enrollment link, found by its hash",
    ),
    coordinator(
        "operator_passkeys",
        "an operator's passkeys, found by credential",
    ),
    coordinator(
        "operator_sessions",
        "an operator's console sessions, found by their hash",
    ),
    coordinator("operator_ceremonies", "a passkey registration under way"),
    coordinator(
        "console_challenge_key",
        "one row: the key every instance seals sign-in challenges with",
    ),
    coordinator(
        "console_used_challenges",
        "sign-in challenges answered once, by their id",
    ),
    coordinator(
        "operator_tokens",
        "an operator's personal token, found by its hash",
    ),
    coordinator(
        "operator_audit",
        "what operators did, about agents and about the console alike, append-only",
    ),
    coordinator(
        "rate_limit_buckets",
        "a bucket's subject is an agent, a sponsor (its agents share its mail sends, decision \
         0045), a webhook endpoint or a passkey: there is no one agent to distribute it by",
    ),
    coordinator(
        "email_attachment_uploads",
        "a record of bytes put in the object store before their message exists, written by the \
         message's id alone (`AttachmentUploads::record_upload` is given no agent) and swept \
         across agents; distributed by agent once that port names the agent",
    ),
    coordinator(
        "sandbox_transactions",
        "the sandbox chain's state, used in development only",
    ),
    coordinator(
        "sandbox_queued_transactions",
        "the sandbox chain's state, used in development only",
    ),
    coordinator(
        "sandbox_balances",
        "the sandbox chain's state, used in development only",
    ),
    coordinator(
        "sandbox_email_outbox",
        "the sandbox mail provider's outbox, used in development only",
    ),
    coordinator(
        "sandbox_sms",
        "the sandbox SMS provider's messages, used in development only",
    ),
];

/// What the checks read of a database's schema.
struct Catalog {
    /// Every table and its columns.
    tables: BTreeMap<String, BTreeSet<String>>,
    /// Primary keys, unique constraints, unique indexes and exclusion constraints.
    keys: Vec<Key>,
    foreign_keys: Vec<ForeignKey>,
}

#[derive(QueryableByName)]
struct Table {
    #[diesel(sql_type = Text)]
    name: String,
    #[diesel(sql_type = Array<Text>)]
    columns: Vec<String>,
}

#[derive(QueryableByName)]
struct Key {
    #[diesel(sql_type = Text)]
    table: String,
    #[diesel(sql_type = Text)]
    name: String,
    /// An expression's place holds `(expression)`.
    #[diesel(sql_type = Array<Text>)]
    columns: Vec<String>,
}

#[derive(QueryableByName)]
struct ForeignKey {
    #[diesel(sql_type = Text)]
    table: String,
    #[diesel(sql_type = Text)]
    name: String,
    #[diesel(sql_type = Array<Text>)]
    columns: Vec<String>,
    #[diesel(sql_type = Text)]
    referenced: String,
    #[diesel(sql_type = Array<Text>)]
    referenced_columns: Vec<String>,
}

async fn read_catalog(connection: &mut AsyncPgConnection) -> Catalog {
    let tables: Vec<Table> = diesel::sql_query(
        "SELECT c.relname::text AS name, \
             ARRAY(SELECT a.attname::text FROM pg_attribute AS a \
                   WHERE a.attrelid = c.oid AND a.attnum > 0 AND NOT a.attisdropped) AS columns \
         FROM pg_class AS c \
         WHERE c.relnamespace = 'public'::regnamespace AND c.relkind IN ('r', 'p') \
           AND NOT c.relispartition",
    )
    .load(connection)
    .await
    .expect("tables");
    // The key columns of each index, in order; its INCLUDE columns are no part of its key.
    let keys: Vec<Key> = diesel::sql_query(
        "SELECT t.relname::text AS table, i.relname::text AS name, \
             ARRAY(SELECT coalesce(a.attname::text, '(expression)') \
                   FROM unnest(x.indkey::int2[]) WITH ORDINALITY AS k(attnum, position) \
                   LEFT JOIN pg_attribute AS a ON a.attrelid = x.indrelid AND a.attnum = k.attnum \
                   WHERE k.position <= x.indnkeyatts ORDER BY k.position) AS columns \
         FROM pg_index AS x \
         JOIN pg_class AS t ON t.oid = x.indrelid \
         JOIN pg_class AS i ON i.oid = x.indexrelid \
         WHERE t.relnamespace = 'public'::regnamespace AND (x.indisunique OR x.indisexclusion) \
         ORDER BY 1, 2",
    )
    .load(connection)
    .await
    .expect("keys");
    let foreign_keys: Vec<ForeignKey> = diesel::sql_query(
        "SELECT t.relname::text AS table, f.conname::text AS name, \
             ARRAY(SELECT a.attname::text FROM unnest(f.conkey) WITH ORDINALITY AS k(attnum, position) \
                   JOIN pg_attribute AS a ON a.attrelid = f.conrelid AND a.attnum = k.attnum \
                   ORDER BY k.position) AS columns, \
             r.relname::text AS referenced, \
             ARRAY(SELECT a.attname::text FROM unnest(f.confkey) WITH ORDINALITY AS k(attnum, position) \
                   JOIN pg_attribute AS a ON a.attrelid = f.confrelid AND a.attnum = k.attnum \
                   ORDER BY k.position) AS referenced_columns \
         FROM pg_constraint AS f \
         JOIN pg_class AS t ON t.oid = f.conrelid \
         JOIN pg_class AS r ON r.oid = f.confrelid \
         WHERE f.contype = 'f' AND t.relnamespace = 'public'::regnamespace \
         ORDER BY 1, 2",
    )
    .load(connection)
    .await
    .expect("foreign keys");
    Catalog {
        tables: tables
            .into_iter()
            .filter(|table| table.name != MIGRATIONS_TABLE)
            .map(|table| (table.name, table.columns.into_iter().collect()))
            .collect(),
        keys,
        foreign_keys,
    }
}

/// The column `table` is, or would be, distributed by.
fn distribution_column(table: &str) -> &'static str {
    if table == AGENTS.0 {
        AGENTS.1
    } else {
        AGENT_COLUMN
    }
}

/// What keeps `table` from being distributed by agent, beside the tables of agent data: those
/// not in `allowed`.
fn faults_of(catalog: &Catalog, table: &str, allowed: &BTreeMap<&str, &NotByAgent>) -> Vec<String> {
    let column = distribution_column(table);
    if !catalog.tables[table].contains(column) {
        return vec![format!("`{table}` has no `{column}` column")];
    }
    let mut faults = Vec::new();
    for key in catalog.keys.iter().filter(|key| key.table == table) {
        if !key.columns.iter().any(|key_column| key_column == column) {
            faults.push(format!(
                "`{table}`: key `{}` ({}) does not include `{column}`",
                key.name,
                key.columns.join(", ")
            ));
        }
    }
    for foreign in catalog
        .foreign_keys
        .iter()
        .filter(|foreign| foreign.table == table)
    {
        match allowed.get(foreign.referenced.as_str()) {
            // A reference table has a copy beside every shard.
            Some(entry) if entry.placement == Placement::Reference => continue,
            Some(_) => {
                faults.push(format!(
                    "`{table}`: foreign key `{}` refers to `{}`, which stays on the coordinator",
                    foreign.name, foreign.referenced
                ));
                continue;
            }
            None => {}
        }
        let theirs = distribution_column(&foreign.referenced);
        let within_one_agent = foreign
            .columns
            .iter()
            .zip(&foreign.referenced_columns)
            .any(|(ours, referenced)| ours == column && referenced == theirs);
        if !within_one_agent {
            faults.push(format!(
                "`{table}`: foreign key `{}` ({}) to `{}` ({}) does not pair `{column}` with \
                 `{}.{theirs}`",
                foreign.name,
                foreign.columns.join(", "),
                foreign.referenced,
                foreign.referenced_columns.join(", "),
                foreign.referenced,
            ));
        }
    }
    faults
}

/// Every table that breaks the rule, and every entry of `allowed` that has no reason to be there
/// any more (its table is gone, or would pass as agent data).
fn faults(catalog: &Catalog, allowed: &[NotByAgent]) -> Vec<String> {
    let by_table: BTreeMap<&str, &NotByAgent> =
        allowed.iter().map(|entry| (entry.table, entry)).collect();
    let mut faults: Vec<String> = allowed
        .iter()
        .filter(|entry| !catalog.tables.contains_key(entry.table))
        .map(|entry| {
            format!(
                "`{}` is listed as not by agent, but there is no such table",
                entry.table
            )
        })
        .collect();
    for table in catalog.tables.keys() {
        let table_faults = faults_of(catalog, table, &by_table);
        match by_table.get(table.as_str()) {
            Some(entry) if table_faults.is_empty() => faults.push(format!(
                "`{table}` is listed as not by agent (\"{}\"), but it would pass as agent data: \
                 take it off the list",
                entry.why
            )),
            Some(_) => {}
            None => faults.extend(table_faults),
        }
    }
    faults
}

#[tokio::test]
async fn every_table_of_agent_data_is_keyed_by_its_agent() {
    let database = TestDatabase::new().await;
    let catalog = read_catalog(&mut database.connection().await).await;
    let faults = faults(&catalog, NOT_BY_AGENT);
    assert!(
        faults.is_empty(),
        "tables that could not be distributed by agent:\n{}",
        faults.join("\n")
    );
}

#[tokio::test]
async fn the_check_names_each_table_that_breaks_the_rule_and_each_entry_without_a_reason() {
    let database = TestDatabase::new().await;
    let mut connection = database.connection().await;
    connection
        .batch_execute(
            "CREATE TABLE unowned_notes (id uuid PRIMARY KEY); \
             CREATE TABLE notes (id uuid PRIMARY KEY, agent_id uuid NOT NULL REFERENCES agents (id), \
                 body text NOT NULL, UNIQUE (id, agent_id), \
                 CONSTRAINT notes_audited FOREIGN KEY (id) REFERENCES operator_audit (id)); \
             CREATE UNIQUE INDEX notes_body ON notes (agent_id, lower(body)); \
             CREATE UNIQUE INDEX notes_body_alone ON notes (lower(body)) INCLUDE (agent_id); \
             CREATE TABLE note_tags (agent_id uuid NOT NULL, note_id uuid NOT NULL, tag text NOT NULL, \
                 PRIMARY KEY (note_id, tag, agent_id), \
                 CONSTRAINT note_tags_note FOREIGN KEY (note_id) REFERENCES notes (id), \
                 CONSTRAINT note_tags_crossed FOREIGN KEY (agent_id, note_id) REFERENCES notes (id, agent_id), \
                 CONSTRAINT note_tags_matched FOREIGN KEY (note_id, agent_id) REFERENCES notes (id, agent_id))",
        )
        .await
        .expect("tables that break the rule");
    let catalog = read_catalog(&mut connection).await;
    let mut allowed = NOT_BY_AGENT.to_vec();
    allowed.push(reference("retired_table", "gone since"));
    allowed.push(coordinator("webhook_turns", "listed by mistake"));
    assert_eq!(
        faults(&catalog, &allowed),
        [
            "`retired_table` is listed as not by agent, but there is no such table",
            "`note_tags`: foreign key `note_tags_crossed` (agent_id, note_id) to `notes` \
             (id, agent_id) does not pair `agent_id` with `notes.agent_id`",
            "`note_tags`: foreign key `note_tags_note` (note_id) to `notes` (id) does not pair \
             `agent_id` with `notes.agent_id`",
            "`notes`: key `notes_body_alone` ((expression)) does not include `agent_id`",
            "`notes`: key `notes_pkey` (id) does not include `agent_id`",
            "`notes`: foreign key `notes_audited` refers to `operator_audit`, which stays on the \
             coordinator",
            "`unowned_notes` has no `agent_id` column",
            "`webhook_turns` is listed as not by agent (\"listed by mistake\"), but it would pass \
             as agent data: take it off the list",
        ]
    );
}

/// The tables `docs/operations.md` names in the paragraph that starts with `marker`.
fn named_in_guide(
    guide: &str,
    marker: &str,
    tables: &BTreeMap<String, BTreeSet<String>>,
) -> BTreeSet<String> {
    let start = guide
        .find(marker)
        .unwrap_or_else(|| panic!("docs/operations.md has no paragraph starting {marker}"));
    let paragraph = guide[start..].split("\n\n").next().unwrap_or_default();
    tables
        .keys()
        .filter(|table| paragraph.contains(&format!("`{table}`")))
        .cloned()
        .collect()
}

#[tokio::test]
async fn the_operations_guide_places_every_table_where_the_check_does() {
    let database = TestDatabase::new().await;
    let catalog = read_catalog(&mut database.connection().await).await;
    let guide = std::fs::read_to_string(workspace_root().join("docs/operations.md"))
        .expect("docs/operations.md");
    let placed = |placement: Placement| -> BTreeSet<String> {
        NOT_BY_AGENT
            .iter()
            .filter(|entry| entry.placement == placement)
            .map(|entry| entry.table.to_owned())
            .collect()
    };
    let by_agent: BTreeSet<String> = catalog
        .tables
        .keys()
        .filter(|table| {
            !NOT_BY_AGENT
                .iter()
                .any(|entry| entry.table == table.as_str())
        })
        .cloned()
        .collect();
    assert_eq!(
        named_in_guide(&guide, "**Distributed by agent**", &catalog.tables),
        by_agent
    );
    assert_eq!(
        named_in_guide(&guide, "**Reference tables**", &catalog.tables),
        placed(Placement::Reference)
    );
    assert_eq!(
        named_in_guide(&guide, "**On the coordinator**", &catalog.tables),
        placed(Placement::Coordinator)
    );
}
