//! Test databases left behind. A test drops its database when it ends, but a killed run never
//! gets there; so every database is named after the process that made it, and a sweep drops
//! those whose process has exited. Test processes of several runs share one server at once: a
//! database is only ever taken for a leftover when its creator ran on this machine and runs no
//! more.

use std::sync::OnceLock;

use diesel_async::{AsyncPgConnection, RunQueryDsl};
use uuid::Uuid;

pub(crate) const TEST_DATABASE_PREFIX: &str = "ar_test_";
const TEMPLATE_PREFIX: &str = "ar_template_";

/// The process that made a test database: the machine it ran on (a hash of the host name and of
/// the PID namespace, whose ids are the ones that mean something here), its id, and when it
/// started (in clock ticks after boot), so a later process given the same id is not taken for it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Creator {
    pub machine: u32,
    pub pid: u32,
    pub started: u64,
}

impl Creator {
    /// This process, or `None` where `/proc` cannot tell (then no database is ever judged left
    /// behind: whether its creator runs cannot be known).
    pub fn this_process() -> Option<Creator> {
        static THIS: OnceLock<Option<Creator>> = OnceLock::new();
        *THIS.get_or_init(|| running(std::process::id()))
    }

    /// A fresh database name of this creator: at most 52 characters, within PostgreSQL's 63.
    pub fn database_name(&self) -> String {
        let unique = Uuid::new_v4().as_u64_pair().0;
        format!(
            "{TEST_DATABASE_PREFIX}{:08x}_{}_{}_{unique:016x}",
            self.machine, self.pid, self.started
        )
    }

    /// The creator a database name records, if it records one.
    fn of(name: &str) -> Option<Creator> {
        let mut parts = name.strip_prefix(TEST_DATABASE_PREFIX)?.split('_');
        let creator = Creator {
            machine: u32::from_str_radix(parts.next()?, 16).ok()?,
            pid: parts.next()?.parse().ok()?,
            started: parts.next()?.parse().ok()?,
        };
        let unique = parts.next()?;
        (unique.len() == 16 && parts.next().is_none()).then_some(creator)
    }
}

/// The process `pid` of this machine as it runs now, if it does.
fn running(pid: u32) -> Option<Creator> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    // The command name, in parentheses, may hold spaces: fields are counted after it, and the
    // start time is the 22nd field, the 20th after the name.
    let (_, after_name) = stat.rsplit_once(')')?;
    let started = after_name.split_whitespace().nth(19)?.parse().ok()?;
    Some(Creator {
        machine: this_machine(),
        pid,
        started,
    })
}

fn this_machine() -> u32 {
    let host = std::fs::read_to_string("/proc/sys/kernel/hostname").unwrap_or_default();
    let namespace = std::fs::read_link("/proc/self/ns/pid")
        .map(|link| link.display().to_string())
        .unwrap_or_default();
    // FNV-1a: stable across toolchains and runs, unlike std's hasher.
    host.trim()
        .bytes()
        .chain(namespace.bytes())
        .fold(0x811c_9dc5, |hash: u32, byte| {
            (hash ^ u32::from(byte)).wrapping_mul(0x0100_0193)
        })
}

/// How far a sweep goes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Sweep {
    /// Test databases whose creator ran on this machine and has exited: what every test process
    /// drops when it starts.
    ExitedCreators,
    /// Those, test databases whose name records no creator (made before creators were
    /// recorded), and every template but the current migrations': `make clean-db`.
    Everything,
}

/// Whether database `name` is a leftover the sweep drops, with `current_template` the template
/// of the migrations in this build and `is_running` telling whether a creator runs.
fn is_leftover(
    name: &str,
    sweep: Sweep,
    current_template: &str,
    is_running: impl Fn(&Creator) -> bool,
) -> bool {
    if name.starts_with(TEMPLATE_PREFIX) {
        return sweep == Sweep::Everything && name != current_template;
    }
    if !name.starts_with(TEST_DATABASE_PREFIX) {
        return false;
    }
    match (Creator::of(name), Creator::this_process()) {
        (Some(creator), Some(here)) => creator.machine == here.machine && !is_running(&creator),
        (Some(_), None) => false,
        (None, _) => sweep == Sweep::Everything,
    }
}

#[derive(diesel::QueryableByName)]
struct DatabaseName {
    #[diesel(sql_type = diesel::sql_types::Text)]
    datname: String,
}

/// The test databases and templates on the server, by name.
pub(crate) async fn databases(admin: &mut AsyncPgConnection) -> Vec<String> {
    diesel::sql_query(
        "SELECT datname FROM pg_database WHERE datname LIKE 'ar\\_test\\_%' \
         OR datname LIKE 'ar\\_template\\_%' ORDER BY datname",
    )
    .load::<DatabaseName>(admin)
    .await
    .unwrap_or_else(|error| panic!("listing the test databases: {error}"))
    .into_iter()
    .map(|row| row.datname)
    .collect()
}

/// Drops what `sweep` takes for leftovers and returns their names. The caller holds the template
/// lock, so no template is being built meanwhile. A database that cannot be dropped now (a
/// template another run clones from this moment) is said on stderr and left for another sweep.
pub(crate) async fn sweep_locked(
    admin: &mut AsyncPgConnection,
    sweep: Sweep,
    current_template: &str,
) -> Vec<String> {
    let mut dropped = Vec::new();
    for name in databases(admin).await {
        if !is_leftover(&name, sweep, current_template, |creator| {
            running(creator.pid) == Some(*creator)
        }) {
            continue;
        }
        // A test database's connections are those of its dead run's orphans: cut them. A
        // template's are clones being made by a live run: let those finish.
        let force = match name.starts_with(TEST_DATABASE_PREFIX) {
            true => " WITH (FORCE)",
            false => "",
        };
        match diesel::sql_query(format!("DROP DATABASE IF EXISTS {name}{force}"))
            .execute(admin)
            .await
        {
            Ok(_) => dropped.push(name),
            Err(error) => eprintln!("test-support: kept {name} for now: {error}"),
        }
    }
    dropped
}

#[cfg(test)]
mod tests {
    use super::*;

    const CURRENT: &str = "ar_template_00000000000000aa";

    fn here() -> Creator {
        Creator::this_process().expect("/proc tells")
    }

    #[test]
    fn a_name_records_its_creator_and_is_short_enough_for_postgresql() {
        let name = here().database_name();
        assert!(name.len() <= 63, "{name}");
        assert_eq!(Creator::of(&name), Some(here()));
        assert_ne!(name, here().database_name(), "names are unique");
        assert_eq!(
            Creator::of("ar_test_0123456789abcdef0123456789abcdef"),
            None
        );
    }

    #[test]
    fn this_process_runs_and_an_id_given_to_a_later_process_is_not_its_creator() {
        assert!(running(std::process::id()) == Some(here()));
        let earlier = Creator {
            started: here().started.saturating_sub(1),
            ..here()
        };
        assert_ne!(running(earlier.pid), Some(earlier));
    }

    #[test]
    fn only_databases_of_exited_creators_here_are_leftovers_of_every_run() {
        let exited = Creator { pid: 1, ..here() };
        let elsewhere = Creator {
            machine: here().machine ^ 1,
            ..exited
        };
        let is_running = |creator: &Creator| *creator == here();
        for sweep in [Sweep::ExitedCreators, Sweep::Everything] {
            let leftover = |name: &str| is_leftover(name, sweep, CURRENT, is_running);
            assert!(leftover(&exited.database_name()));
            assert!(!leftover(&here().database_name()));
            assert!(!leftover(&elsewhere.database_name()));
            assert!(!leftover(CURRENT));
            assert!(!leftover("postgres"));
        }
    }

    #[test]
    fn everything_also_takes_unattributed_databases_and_other_templates() {
        for name in [
            "ar_test_0123456789abcdef0123456789abcdef",
            "ar_template_00000000000000bb",
            "ar_template_00000000000000aa_building",
        ] {
            assert!(is_leftover(name, Sweep::Everything, CURRENT, |_| true));
            assert!(!is_leftover(name, Sweep::ExitedCreators, CURRENT, |_| true));
        }
    }
}
