//! `metaclaw`: the headless daemon and its command line.

mod bench_cmd;
mod cli;
mod config_cmd;
mod connection;
mod daemon;
mod job;
mod output;
mod scheduler_cmd;
mod seed;
mod setup;
mod skills_cmd;
mod status;
mod tasks_cmd;
mod train_cmd;

use std::process::ExitCode;

use clap::Parser;
use metaclaw_config::Home;

use crate::cli::{Cli, Command, ConfigArgs};

fn main() -> ExitCode {
    let cli = Cli::parse();
    let home = match Home::from_env() {
        Ok(h) => h,
        Err(e) => {
            return output::fail(&format!("cannot find the MetaClaw home directory: {e}"), 1);
        }
    };
    let result = match cli.command {
        Command::Setup(args) => setup::run(&home, args),
        Command::Start(args) if args.foreground => daemon::run_foreground(&home, &args),
        Command::Start(args) => daemon::start_detached(&home, &args),
        Command::Stop { unwire } => daemon::stop(&home).and_then(|()| {
            if unwire {
                daemon::unwire(&home)
            } else {
                Ok(())
            }
        }),
        Command::Uninstall { yes, purge } => daemon::uninstall(&home, yes, purge),
        Command::Status(args) => status::run(&home, &args),
        Command::Config(ConfigArgs { key, value }) => config_cmd::run(&home, key, value),
        Command::Skills(cmd) => skills_cmd::run(&home, cmd),
        Command::Feedback {
            turn_id,
            rating,
            note,
        } => skills_cmd::feedback(&home, &turn_id, &rating, note),
        Command::Scheduler(cmd) => scheduler_cmd::run(&home, cmd),
        Command::TrainStep { timeout } => train_cmd::run(&home, timeout),
        Command::Rollout(args) => tasks_cmd::rollout(&home, args),
        Command::Eval(args) => tasks_cmd::eval(&home, args),
        Command::Bench(args) => bench_cmd::run(&home, args),
        Command::Adapters => tasks_cmd::adapters(&home),
        Command::Rollback { step } => tasks_cmd::rollback(&home, step),
        Command::Dashboard { print_url } => daemon::dashboard(&home, print_url),
        Command::Dev(cli::DevCommand::Seed) => seed::run(&home),
        Command::Version => {
            output::say(&format!("metaclaw {}", env!("CARGO_PKG_VERSION")));
            Ok(())
        }
    };
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            // The exit status follows the class of an API error (README, "Exit status").
            let code = e
                .chain()
                .find_map(|c| c.downcast_ref::<metaclaw_core::api::ApiError>())
                .map_or(1, |a| a.code.exit_code());
            output::fail(&format!("{e:#}"), code)
        }
    }
}
