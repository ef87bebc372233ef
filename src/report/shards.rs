//! The report's shard-moves table: for each cell of a sharded strategy whose phase moves
//! shards, what happened inside the moves' windows and outside them.

use crate::results::{CellResult, RunResult, ShardMovesSeen, cell_key};

/// How to read the shard-moves table.
pub const SHARDS_HOW: &str = "Per cell of a sharded strategy whose phase moves shards (shard_moves), over all repetitions: how many moves happened, and the duplicate claims (the ledger's: a claim of a job another worker held) and lost races (a conditional claim's update that found its candidate taken) counted inside the moves' windows and outside them. A window runs from the moment the new owners' shards were sent to the shard map to the moment the old owners had lost them (the overlap, when both claim from a moved shard), plus the trial's longest claim call after warm-up (grace_s in run.json), since a claim that read its candidates while its worker owned the shard returns after. A sharded poller's plain read then write duplicates inside the windows only: its shard map is all that keeps two workers apart, and a moved shard has two owners until the old one notices. The conditional claim turns the same collisions into lost races; a skip-locked claim skips the other owner's rows. Per window lists each move's duplicate claims / lost races in order.";

/// The moves of every trial of `c` that moved shards.
fn moves(c: &CellResult) -> impl Iterator<Item = &ShardMovesSeen> {
    c.trials.iter().filter_map(|t| t.shard_moves.as_ref())
}

/// One row per cell whose trials moved shards; `None` when none did.
pub fn table(r: &RunResult) -> Option<(Vec<&'static str>, Vec<Vec<String>>)> {
    let mut header = crate::results::KEY_HEADER.to_vec();
    header.extend([
        "moves",
        "duplicate claims in windows",
        "duplicate claims outside",
        "lost races in windows",
        "lost races outside",
        "per window",
    ]);
    let rows: Vec<Vec<String>> = r
        .cells
        .iter()
        .filter(|c| moves(c).next().is_some())
        .map(|c| {
            let (mut n, mut dup_in, mut dup_out, mut lost_in, mut lost_out) = (0, 0, 0, 0, 0);
            let mut each = Vec::new();
            for m in moves(c) {
                n += m.windows.len();
                dup_out += m.outside.duplicate_claims;
                lost_out += m.outside.lost_races;
                for w in &m.windows {
                    dup_in += w.duplicate_claims;
                    lost_in += w.lost_races;
                    each.push(format!("{}/{}", w.duplicate_claims, w.lost_races));
                }
            }
            let mut row = cell_key(c);
            row.extend([
                n.to_string(),
                dup_in.to_string(),
                dup_out.to_string(),
                lost_in.to_string(),
                lost_out.to_string(),
                each.join(", "),
            ]);
            row
        })
        .collect();
    (!rows.is_empty()).then_some((header, rows))
}
