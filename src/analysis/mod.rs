//! Answers computed from a run's cells: the figures each cell is judged by, whether it
//! meets the SLOs, the recommended worker count and batch size, the sustainable arrival
//! rate, the scalability fit, confidence intervals, and the verdict sentences. Pure
//! functions of a [`crate::results::RunResult`], so `recommend` and `report` give the
//! same answers for an old run.json as the run that wrote it.

mod advisory;
pub mod bootstrap;
mod brokers;
pub mod changepoint;
pub mod cleanup;
pub mod cluster;
pub mod compare;
pub mod cost;
pub mod drift;
mod durability;
pub mod figures;
pub mod gates;
pub mod history;
mod layouts;
pub mod network;
pub mod paired;
pub mod pooler;
mod queues;
pub mod rate_search;
pub mod recommend;
mod reruns;
mod run;
pub mod shards;
mod storage;
pub mod story;
pub mod usl;

pub use run::RunAnalysis;
