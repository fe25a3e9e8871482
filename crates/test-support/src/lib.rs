//! Test databases: each test gets its own PostgreSQL database, cloned from a template that is
//! migrated once per set of migrations, and dropped when the test ends; those of killed runs are
//! dropped by the next run (`leftovers`).
//!
//! The server used is `TEST_DATABASE_URL` (any database on it; it must allow CREATE DATABASE),
//! else the project-local cluster that `scripts/local-pg.sh` starts. Connections open through
//! `postgres_store::Connector`, so the URL's TLS settings apply to them as to the service's.
//!
//! `s3`: an S3-compatible server (moto's) with a fresh bucket per test.

use std::path::PathBuf;
use std::process::Command;
use std::sync::OnceLock;
use std::time::{Duration, Instant};

use diesel::sql_types::{Bool, Text};
use diesel_async::{AsyncPgConnection, RunQueryDsl, SimpleAsyncConnection};
use postgres_store::Connector;
use tokio::sync::OnceCell;
use url::form_urlencoded;
use uuid::Uuid;

mod leftovers;
pub mod s3;

pub use leftovers::{Creator, Sweep};
pub use s3::S3Server;

/// Advisory lock key that serialises template creation across test processes.
const TEMPLATE_LOCK_KEY: i64 = 0x7465_6d70_6c61_7465;
const DEADLINE: Duration = Duration::from_secs(30);

/// The workspace root, for scripts and committed files.
pub fn workspace_root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../..")
        .canonicalize()
        .expect("workspace root exists")
}

/// URL of the maintenance database of the test server.
pub fn server_url() -> &'static str {
    static URL: OnceLock<String> = OnceLock::new();
    URL.get_or_init(|| {
        if let Ok(url) = std::env::var("TEST_DATABASE_URL") {
            return url;
        }
        let script = workspace_root().join("scripts/local-pg.sh");
        let output = Command::new(&script)
            .arg("postgres")
            .output()
            .unwrap_or_else(|error| panic!("running {}: {error}", script.display()));
        assert!(
            output.status.success(),
            "{} failed: {}",
            script.display(),
            String::from_utf8_lossy(&output.stderr)
        );
        String::from_utf8(output.stdout)
            .expect("UTF-8 URL")
            .trim()
            .to_owned()
    })
}

/// The PEM file of the authority that signed the test server's certificate: `TEST_DATABASE_CA`,
/// else, on the project-local cluster, the one `scripts/local-pg.sh` generated.
pub fn server_ca() -> PathBuf {
    if let Some(path) = std::env::var_os("TEST_DATABASE_CA") {
        return PathBuf::from(path);
    }
    assert!(
        std::env::var_os("TEST_DATABASE_URL").is_none(),
        "TEST_DATABASE_URL is set without TEST_DATABASE_CA, the PEM file of the authority that \
         signed that server's certificate: the TLS tests need both"
    );
    server_url();
    workspace_root().join(".data/pg-ca.pem")
}

/// The URL of database `name` on the test server.
fn database_url(name: &str) -> String {
    let base = server_url();
    let (without_query, query) = base
        .split_once('?')
        .map_or((base, None), |(b, q)| (b, Some(q)));
    let server = without_query
        .rsplit_once('/')
        .map_or(without_query, |(server, _)| server);
    match query {
        Some(query) => format!("{server}/{name}?{query}"),
        None => format!("{server}/{name}"),
    }
}

fn connector(url: &str) -> Connector {
    Connector::from_url(url).unwrap_or_else(|error| panic!("the test server's URL: {error}"))
}

async fn admin_connection() -> AsyncPgConnection {
    connector(server_url())
        .open()
        .await
        .unwrap_or_else(|error| panic!("connecting to the test server: {error}"))
}

/// Runs `sql` until it succeeds or the deadline passes: a database that a just-closed connection
/// still holds for a moment refuses to be cloned, renamed or dropped.
async fn execute_with_retry(connection: &mut AsyncPgConnection, sql: &str) {
    let started = Instant::now();
    loop {
        match diesel::sql_query(sql).execute(connection).await {
            Ok(_) => return,
            Err(error) if started.elapsed() < DEADLINE => {
                let message = error.to_string();
                assert!(
                    message.contains("being accessed by other users"),
                    "{sql}: {message}"
                );
                tokio::time::sleep(Duration::from_millis(50)).await;
            }
            Err(error) => panic!("{sql}: {error}"),
        }
    }
}

#[derive(diesel::QueryableByName)]
struct Count {
    #[diesel(sql_type = diesel::sql_types::Integer)]
    count: i32,
}

fn template_name() -> String {
    format!("ar_template_{}", postgres_store::MIGRATIONS_FINGERPRINT)
}

async fn lock_templates(admin: &mut AsyncPgConnection) {
    diesel::sql_query(format!("SELECT pg_advisory_lock({TEMPLATE_LOCK_KEY})"))
        .execute(admin)
        .await
        .expect("template lock");
}

async fn unlock_templates(admin: &mut AsyncPgConnection) {
    diesel::sql_query(format!("SELECT pg_advisory_unlock({TEMPLATE_LOCK_KEY})"))
        .execute(admin)
        .await
        .expect("template unlock");
}

/// Drops what `sweep` takes for leftovers on the test server, under the template lock, and
/// returns their names.
pub async fn drop_leftovers(sweep: Sweep) -> Vec<String> {
    let mut admin = admin_connection().await;
    lock_templates(&mut admin).await;
    let dropped = leftovers::sweep_locked(&mut admin, sweep, &template_name()).await;
    unlock_templates(&mut admin).await;
    dropped
}

/// The test databases and templates on the test server, by name.
pub async fn existing_databases() -> Vec<String> {
    leftovers::databases(&mut admin_connection().await).await
}

/// The name of a migrated template, creating it if this set of migrations has none yet. The
/// first call of a process also drops the databases of runs that were killed.
async fn template() -> &'static str {
    static TEMPLATE: OnceCell<String> = OnceCell::const_new();
    TEMPLATE
        .get_or_init(|| async {
            let name = template_name();
            let mut admin = admin_connection().await;
            lock_templates(&mut admin).await;
            let exists = diesel::sql_query(
                "SELECT count(*)::int AS count FROM pg_database WHERE datname = $1",
            )
            .bind::<diesel::sql_types::Text, _>(&name)
            .get_result::<Count>(&mut admin)
            .await
            .expect("looking up the template")
            .count
                > 0;
            if !exists {
                let building = format!("{name}_building");
                execute_with_retry(
                    &mut admin,
                    &format!("DROP DATABASE IF EXISTS {building} WITH (FORCE)"),
                )
                .await;
                execute_with_retry(&mut admin, &format!("CREATE DATABASE {building}")).await;
                postgres_store::run_migrations(&connector(&database_url(&building)))
                    .await
                    .expect("migrating the template");
                execute_with_retry(
                    &mut admin,
                    &format!("ALTER DATABASE {building} RENAME TO {name}"),
                )
                .await;
            }
            leftovers::sweep_locked(&mut admin, Sweep::ExitedCreators, &name).await;
            unlock_templates(&mut admin).await;
            name
        })
        .await
}

/// A migrated database of the test's own, dropped when this value is dropped.
pub struct TestDatabase {
    name: String,
    url: String,
}

impl TestDatabase {
    pub async fn new() -> Self {
        let template = template().await;
        let name = match Creator::this_process() {
            Some(creator) => creator.database_name(),
            // Where the creator cannot be told, the name records none: only `make clean-db`
            // drops such a database when it is left behind.
            None => format!(
                "{}{}",
                leftovers::TEST_DATABASE_PREFIX,
                Uuid::new_v4().simple()
            ),
        };
        let mut admin = admin_connection().await;
        execute_with_retry(
            &mut admin,
            &format!("CREATE DATABASE {name} TEMPLATE {template}"),
        )
        .await;
        Self {
            url: database_url(&name),
            name,
        }
    }

    pub fn url(&self) -> &str {
        &self.url
    }

    /// `url()` with these TLS settings (`sslmode`, `sslrootcert`) in place of the server URL's own.
    pub fn url_with_tls(&self, settings: &[(&str, &str)]) -> String {
        let (base, query) = self.url.split_once('?').unwrap_or((&self.url, ""));
        let mut kept = form_urlencoded::Serializer::new(String::new());
        for (name, value) in form_urlencoded::parse(query.as_bytes()) {
            if name != "sslmode" && name != "sslrootcert" {
                kept.append_pair(&name, &value);
            }
        }
        format!("{base}?{}", kept.extend_pairs(settings).finish())
    }

    /// The connector of `url()`, as the service builds it.
    /// `url()` with a host of the caller's (`127.0.0.1:first`) listed before the test server,
    /// as a formation's URL lists its nodes, each host given 1 s to connect; and the test
    /// server's own address (`host:port`).
    pub fn url_behind(&self, first: u16) -> (String, String) {
        let parsed = url::Url::parse(&self.url).expect("the test database's URL");
        let server = format!(
            "{}:{}",
            parsed.host_str().expect("a host"),
            parsed.port().unwrap_or(5432)
        );
        let credentials = match parsed.password() {
            Some(password) => format!("{}:{password}", parsed.username()),
            None => parsed.username().to_owned(),
        };
        let query = parsed
            .query()
            .map(|query| format!("{query}&"))
            .unwrap_or_default();
        let url = format!(
            "postgres://{credentials}@127.0.0.1:{first},{server}{}?{query}connect_timeout=1",
            parsed.path()
        );
        (url, server)
    }

    /// `url()` as a formation's URL asking for its primary: the test server listed twice
    /// (`target_session_attrs=read-write`). A session the server opens read-only
    /// (`default_transaction_read_only`) is refused as a standby's is.
    pub fn formation_url(&self) -> String {
        let (_, server) = self.url_behind(0);
        let port = server.rsplit_once(':').expect("host:port").1;
        let (url, _) = self.url_behind(port.parse().expect("a port"));
        format!("{url}&target_session_attrs=read-write")
    }

    pub fn connector(&self) -> Connector {
        connector(&self.url)
    }

    pub fn name(&self) -> &str {
        &self.name
    }

    /// A connection of the test's own to this database.
    pub async fn connection(&self) -> AsyncPgConnection {
        self.connector()
            .open()
            .await
            .unwrap_or_else(|error| panic!("connecting to {}: {error}", self.name))
    }

    /// Every other client session on this database, as PostgreSQL sees it.
    pub async fn sessions(&self) -> Vec<Session> {
        diesel::sql_query(
            "SELECT coalesce(activity.query, '') AS last_query, tls.ssl AS encrypted, \
             coalesce(activity.wait_event_type = 'Lock', false) AS waiting_for_lock, \
             coalesce(activity.xact_start::text, '') AS transaction_started \
             FROM pg_stat_activity AS activity JOIN pg_stat_ssl AS tls USING (pid) \
             WHERE activity.datname = current_database() AND activity.pid <> pg_backend_pid() \
             AND activity.backend_type = 'client backend'",
        )
        .load(&mut self.connection().await)
        .await
        .unwrap_or_else(|error| panic!("reading the sessions of {}: {error}", self.name))
    }

    /// Runs `sql` on this database, e.g. to move recorded times back as a clock moving on would.
    pub async fn execute(&self, sql: &str) {
        self.connection()
            .await
            .batch_execute(sql)
            .await
            .unwrap_or_else(|error| panic!("{sql}: {error}"));
    }

    /// Runs `sql` in a transaction left open, e.g. to hold a row lock, until the value is dropped.
    pub async fn hold(&self, sql: &str) -> HeldTransaction {
        let mut connection = self.connection().await;
        connection
            .batch_execute(&format!("BEGIN; {sql}"))
            .await
            .unwrap_or_else(|error| panic!("{sql}: {error}"));
        HeldTransaction {
            _connection: connection,
        }
    }
}

/// A client session of a test database.
#[derive(Debug, diesel::QueryableByName)]
pub struct Session {
    /// The statement it ran last (`LISTEN ...` for a notification hub's).
    #[diesel(sql_type = Text)]
    pub last_query: String,
    /// Whether its connection is encrypted (`pg_stat_ssl.ssl`).
    #[diesel(sql_type = Bool)]
    pub encrypted: bool,
    /// Whether it is waiting for a lock another session holds.
    #[diesel(sql_type = Bool)]
    pub waiting_for_lock: bool,
    /// When its transaction began (empty outside one): a statement tried again in a transaction
    /// of its own shows a new one.
    #[diesel(sql_type = Text)]
    pub transaction_started: String,
}

/// An open transaction; dropping it closes its connection, which rolls it back.
pub struct HeldTransaction {
    _connection: AsyncPgConnection,
}

impl Drop for TestDatabase {
    fn drop(&mut self) {
        let sql = format!("DROP DATABASE IF EXISTS {} WITH (FORCE)", self.name);
        // Drop may run inside a runtime that is shutting down: use a thread with its own.
        let dropped = std::thread::spawn(move || {
            let runtime = tokio::runtime::Builder::new_current_thread()
                .enable_all()
                .build()
                .expect("runtime for dropping a test database");
            runtime.block_on(async {
                let mut admin = admin_connection().await;
                execute_with_retry(&mut admin, &sql).await;
            });
        })
        .join();
        if dropped.is_err() && !std::thread::panicking() {
            panic!("dropping test database {} failed", self.name);
        }
    }
}
