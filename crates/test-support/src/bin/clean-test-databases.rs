//! `make clean-db`: drops every leftover test database on the test server (`TEST_DATABASE_URL`,
//! else the project-local cluster): those of runs that were killed, those whose name records no
//! creator, and the templates of other migrations. Databases of runs still going are kept.

use std::process::ExitCode;

use test_support::{drop_leftovers, Sweep};

fn main() -> ExitCode {
    let runtime = match tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
    {
        Ok(runtime) => runtime,
        Err(error) => {
            eprintln!("clean-test-databases: starting the runtime: {error}");
            return ExitCode::FAILURE;
        }
    };
    let dropped = runtime.block_on(drop_leftovers(Sweep::Everything));
    for name in &dropped {
        println!("dropped {name}");
    }
    println!("clean-db: {} leftover database(s) dropped", dropped.len());
    ExitCode::SUCCESS
}
