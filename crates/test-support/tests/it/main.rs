//! The harness against a real PostgreSQL: leftovers of killed runs are dropped, databases of
//! running tests are not.

use test_support::{drop_leftovers, existing_databases, Creator, Sweep, TestDatabase};

/// A process that ran here and has exited.
fn exited_process() -> Creator {
    let mut child = std::process::Command::new("true")
        .spawn()
        .expect("spawning true");
    child.wait().expect("true exits");
    let here = Creator::this_process().expect("/proc tells");
    Creator {
        pid: child.id(),
        ..here
    }
}

#[tokio::test]
async fn the_databases_of_exited_runs_are_dropped_and_those_of_running_ones_kept() {
    let running = TestDatabase::new().await;
    let here = Creator::this_process().expect("/proc tells");
    let exited = exited_process().database_name();
    // This process's id, but a start time of another process that had it before.
    let id_reused = Creator {
        started: here.started.saturating_sub(1),
        ..here
    }
    .database_name();
    let elsewhere = Creator {
        machine: here.machine ^ 1,
        ..exited_process()
    }
    .database_name();
    for name in [&exited, &id_reused, &elsewhere] {
        running.execute(&format!("CREATE DATABASE {name}")).await;
    }
    // Another test's sweep may drop them first: what counts is that they are gone.
    drop_leftovers(Sweep::ExitedCreators).await;
    let left = existing_databases().await;
    for gone in [&exited, &id_reused] {
        assert!(!left.contains(gone), "{gone} still there");
    }
    for kept in [running.name(), elsewhere.as_str()] {
        assert!(left.iter().any(|name| name == kept), "{kept} was dropped");
    }
    running.execute(&format!("DROP DATABASE {elsewhere}")).await;
}

#[tokio::test]
async fn clean_db_also_drops_unattributed_databases_and_other_templates_but_not_the_current() {
    let running = TestDatabase::new().await;
    let unattributed = format!("ar_test_{}", uuid::Uuid::new_v4().simple());
    let stale_template = "ar_template_0000000000000000";
    for name in [unattributed.as_str(), stale_template] {
        running
            .execute(&format!("DROP DATABASE IF EXISTS {name}"))
            .await;
        running.execute(&format!("CREATE DATABASE {name}")).await;
    }
    let dropped = drop_leftovers(Sweep::Everything).await;
    let left = existing_databases().await;
    for gone in [unattributed.as_str(), stale_template] {
        assert!(dropped.iter().any(|name| name == gone), "{dropped:?}");
        assert!(!left.iter().any(|name| name == gone), "{gone} still there");
    }
    let current = format!("ar_template_{}", postgres_store::MIGRATIONS_FINGERPRINT);
    assert!(left.contains(&current), "{left:?}");
    assert!(left.iter().any(|name| name == running.name()));
}
