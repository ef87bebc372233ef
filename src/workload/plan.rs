//! The run's plan: every cell the workload's matrix expands to, in the order the runner
//! runs them, on which target, alone or paired. A pure function of the workload and
//! the targets, so the runner executes it, its progress counts the trials in it and
//! `validate` prints and counts from it: the matrix's shape is known here once.

use super::Workload;
use crate::strategy::Strategy;

/// What the run drives, as the plan needs it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Targets {
    /// Backends every unpaired cell runs on, one after the other.
    pub backends: usize,
    /// `run --versus-pg-bindir`: two servers, every cell a pair of them (A the first).
    pub versus: bool,
}

impl Targets {
    /// The workload's own backends (PostgreSQL alone when it names none).
    pub fn declared(w: &Workload) -> Targets {
        Targets {
            backends: w.backends.len().max(1),
            versus: false,
        }
    }
}

/// One cell of a block, before a target is chosen.
#[derive(Debug, Clone, PartialEq)]
pub struct PlannedCell {
    pub strategy: Strategy,
    pub layout: String,
    pub workers: u32,
    pub batch: u32,
}

/// One thing the runner does, in order.
#[derive(Debug, Clone, PartialEq)]
pub enum Step {
    /// A cell on one target: its repetitions, or its rate search's steps.
    Cell {
        block: usize,
        target: usize,
        cell: PlannedCell,
    },
    /// Two cells run as interleaved rounds, B judged against A: a paired block's two
    /// variants on one target, or one cell on the two servers of `--versus-pg-bindir`.
    Pair {
        block: usize,
        a: (usize, PlannedCell),
        b: (usize, PlannedCell),
    },
}

impl Step {
    pub fn block(&self) -> usize {
        match self {
            Step::Cell { block, .. } | Step::Pair { block, .. } => *block,
        }
    }
}

/// The run's steps, in order.
#[derive(Debug, Clone, PartialEq)]
pub struct Plan {
    pub steps: Vec<Step>,
}

impl Plan {
    pub fn of(w: &Workload, t: Targets) -> Plan {
        let mut steps = Vec::new();
        for (block, m) in w.matrices.iter().enumerate() {
            // Target i is the run's i-th backend; a block that names its own runs on
            // those only.
            let on = |i: usize| w.backends.get(i).is_none_or(|k| m.runs_on(*k));
            let cell =
                |strategy: &Strategy, layout: &String, workers: u32, batch: u32| PlannedCell {
                    strategy: strategy.clone(),
                    layout: layout.clone(),
                    workers,
                    batch,
                };
            if m.phase.paired.is_some() && !t.versus {
                // The variants: A first, B the second strategy or the second layout.
                let side = |i: usize, workers, batch| {
                    let s = &m.strategies[i.min(m.strategies.len() - 1)];
                    let l = &m.index_layouts[i.min(m.index_layouts.len() - 1)];
                    cell(s, l, workers, batch)
                };
                for &workers in &m.workers {
                    for &batch in &m.batch_sizes {
                        for target in (0..t.backends).filter(|&i| on(i)) {
                            steps.push(Step::Pair {
                                block,
                                a: (target, side(0, workers, batch)),
                                b: (target, side(1, workers, batch)),
                            });
                        }
                    }
                }
                continue;
            }
            for layout in &m.index_layouts {
                for strategy in &m.strategies {
                    for &workers in &m.workers {
                        for &batch in &m.batch_sizes {
                            let c = cell(strategy, layout, workers, batch);
                            if t.versus {
                                steps.push(Step::Pair {
                                    block,
                                    a: (0, c.clone()),
                                    b: (1, c),
                                });
                                continue;
                            }
                            for target in (0..t.backends).filter(|&i| on(i)) {
                                steps.push(Step::Cell {
                                    block,
                                    target,
                                    cell: c.clone(),
                                });
                            }
                        }
                    }
                }
            }
        }
        Plan { steps }
    }

    /// Cells recorded: a pair records two.
    pub fn cells(&self) -> usize {
        self.steps
            .iter()
            .map(|s| match s {
                Step::Cell { .. } => 1,
                Step::Pair { .. } => 2,
            })
            .sum()
    }

    /// Trials the plan runs at most: each cell's repetitions (a paired block's rounds
    /// per side), or its rate search's most trials.
    pub fn trials(&self, w: &Workload) -> usize {
        self.steps
            .iter()
            .map(|s| {
                let m = &w.matrices[s.block()].phase;
                let per_cell = match m.search {
                    Some(search) => search.max_trials,
                    None => m.repetitions.unwrap_or(w.trial.repetitions),
                } as usize;
                match s {
                    Step::Cell { .. } => per_cell,
                    Step::Pair { .. } => per_cell.saturating_mul(2),
                }
            })
            .fold(0usize, usize::saturating_add)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A workload with one block of these matrix lines and `repetitions`.
    fn workload(matrix: &str, repetitions: u32) -> Workload {
        let text = format!(
            "name = 't'\n[population]\nbacklog = 100\nqueues = [{{ name = 'default' }}]\n[[matrix]]\n{matrix}\n[trial]\nduration_s = 1\nrepetitions = {repetitions}\n"
        );
        Workload::parse(std::path::Path::new("w.toml"), &text).unwrap()
    }

    #[test]
    fn an_unpaired_block_runs_every_cell_on_every_target_in_matrix_order() {
        let w = workload(
            "strategies = ['production', 'naive']\nindex_layouts = ['fetch-order']\nworkers = [1, 2]\nbatch_sizes = [5]",
            3,
        );
        let plan = Plan::of(
            &w,
            Targets {
                backends: 2,
                versus: false,
            },
        );
        let order: Vec<(String, u32, usize)> = plan
            .steps
            .iter()
            .map(|s| match s {
                Step::Cell { target, cell, .. } => {
                    (cell.strategy.to_string(), cell.workers, *target)
                }
                Step::Pair { .. } => panic!("no pair in an unpaired block"),
            })
            .collect();
        let want = [
            ("production", 1, 0),
            ("production", 1, 1),
            ("production", 2, 0),
            ("production", 2, 1),
            ("naive", 1, 0),
            ("naive", 1, 1),
            ("naive", 2, 0),
            ("naive", 2, 1),
        ];
        assert_eq!(order, want.map(|(s, w, t)| (s.to_string(), w, t)).to_vec());
        assert_eq!((plan.cells(), plan.trials(&w)), (8, 24));
        // The workload's own count is the plan's, on its declared targets.
        assert_eq!(w.trial_count(), 12);
    }

    /// Blocks that name their own backends run on those targets only (a SQL claim on
    /// postgres beside a broker's on redis); a block that names none, on every one.
    #[test]
    fn a_block_waiting_for_a_db_is_left_out_without_one_with_its_backend() {
        let text = "name = 't'\n[population]\nbacklog = 100\nqueues = [{ name = 'default' }]\n[handler]\nretry_delay_ms = 0\n\
            [[matrix]]\nname = 'table'\nbackends = ['postgres']\nstrategies = ['production']\nindex_layouts = ['fetch-order']\nworkers = [1]\nbatch_sizes = [5]\n\
            [[matrix]]\nname = 'rabbit'\nbackends = ['rabbitmq']\nif_db_given = true\nstrategies = ['rabbitmq']\nindex_layouts = ['classic-queue']\nworkers = [2]\nbatch_sizes = [5]\n\
            [trial]\nduration_s = 1\n";
        use crate::backend_kind::BackendKind;
        let parse = || Workload::parse(std::path::Path::new("w.toml"), text).unwrap();
        let mut w = parse();
        assert_eq!(w.drop_blocks_without_db(&[]), ["rabbit"]);
        assert_eq!(w.backends, vec![BackendKind::Postgres]);
        assert_eq!(w.matrices.len(), 1);
        let mut w = parse();
        assert!(
            w.drop_blocks_without_db(&[BackendKind::Rabbitmq])
                .is_empty()
        );
        assert_eq!(
            w.backends,
            vec![BackendKind::Postgres, BackendKind::Rabbitmq]
        );
        let without = text.replace("backends = ['rabbitmq']\n", "");
        let e = Workload::parse(std::path::Path::new("w.toml"), &without)
            .unwrap_err()
            .to_string();
        assert!(
            e.contains("matrix[1].if_db_given: needs the block's own backends"),
            "{e}"
        );
    }

    #[test]
    fn a_block_with_its_own_backends_runs_on_those_targets_only() {
        let text = "name = 't'\n[population]\nbacklog = 100\nqueues = [{ name = 'default' }]\n[handler]\nretry_delay_ms = 0\n\
            [[matrix]]\nname = 'table'\nbackends = ['postgres']\nstrategies = ['production']\nindex_layouts = ['fetch-order']\nworkers = [1, 2]\nbatch_sizes = [5]\n\
            [[matrix]]\nname = 'broker'\nbackends = ['redis']\nstrategies = ['redis-streams']\nindex_layouts = ['stream']\nworkers = [2]\nbatch_sizes = [5]\n\
            [trial]\nduration_s = 1\nrepetitions = 2\n";
        let w = Workload::parse(std::path::Path::new("w.toml"), text).unwrap();
        use crate::backend_kind::BackendKind;
        assert_eq!(w.backends, vec![BackendKind::Postgres, BackendKind::Redis]);
        let plan = Plan::of(&w, Targets::declared(&w));
        let on: Vec<(usize, usize, u32)> = plan
            .steps
            .iter()
            .map(|s| match s {
                Step::Cell {
                    block,
                    target,
                    cell,
                } => (*block, *target, cell.workers),
                Step::Pair { .. } => panic!("{s:?}"),
            })
            .collect();
        assert_eq!(on, vec![(0, 0, 1), (0, 0, 2), (1, 1, 2)]);
        assert_eq!(plan.trials(&w), 6);
        assert_eq!(w.trial_count(), 6);
    }

    #[test]
    fn versus_pairs_every_cell_across_the_two_servers_and_counts_both_sides() {
        let w = workload(
            "strategies = ['production']\nindex_layouts = ['fetch-order']\nworkers = [4]\nbatch_sizes = [1, 10]",
            3,
        );
        let plan = Plan::of(
            &w,
            Targets {
                backends: 1,
                versus: true,
            },
        );
        assert_eq!(plan.steps.len(), 2);
        for s in &plan.steps {
            let Step::Pair { a, b, .. } = s else {
                panic!("{s:?}")
            };
            assert_eq!((a.0, b.0), (0, 1));
            assert_eq!(a.1, b.1);
        }
        assert_eq!((plan.cells(), plan.trials(&w)), (4, 12));
    }

    #[test]
    fn a_paired_block_pairs_its_two_variants_on_each_target() {
        let w = workload(
            "strategies = ['production', 'waiting']\nindex_layouts = ['fetch-order']\nworkers = [2, 4]\nbatch_sizes = [10]\npaired = true",
            3,
        );
        let plan = Plan::of(&w, Targets::declared(&w));
        let sides: Vec<(String, String, u32)> = plan
            .steps
            .iter()
            .map(|s| match s {
                Step::Pair { a, b, .. } => (
                    a.1.strategy.to_string(),
                    b.1.strategy.to_string(),
                    a.1.workers,
                ),
                Step::Cell { .. } => panic!("a paired block runs no cell alone"),
            })
            .collect();
        assert_eq!(
            sides,
            [("production", "waiting", 2), ("production", "waiting", 4)]
                .map(|(a, b, w)| (a.to_string(), b.to_string(), w))
                .to_vec()
        );
        assert_eq!((plan.cells(), plan.trials(&w)), (4, 12));
        assert_eq!(w.trial_count(), 12);
    }
}
