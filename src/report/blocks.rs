//! The report's building blocks, typed: tables of cells, paragraphs, titled sections.
//! Every table and section is built once from the run (report/tables.rs,
//! report/answers.rs, report/appendix.rs) and put together in report/document.rs;
//! each format renders these, and none reparses another's text.

use serde::Serialize;

/// One table cell; `head` makes it a row heading, `left` aligns it as a name.
#[derive(Debug, Clone, Serialize, Default, PartialEq)]
pub struct Cell {
    pub text: String,
    pub bold: bool,
    pub left: bool,
    pub head: bool,
}

#[derive(Debug, Clone, Serialize, Default, PartialEq)]
pub struct Table {
    pub header: Vec<Cell>,
    pub rows: Vec<Vec<Cell>>,
}

/// A cell from the table functions' text, where a whole cell in `**` is bold (a failed
/// gate's `**FAIL**`): the mark becomes the flag, so no format sees asterisks it would
/// have to strip.
fn text_cell(text: &str, left: bool) -> Cell {
    match text.strip_prefix("**").and_then(|x| x.strip_suffix("**")) {
        Some(inner) if !inner.is_empty() => Cell {
            text: inner.to_string(),
            bold: true,
            left,
            head: false,
        },
        _ => Cell {
            text: text.to_string(),
            left,
            ..Cell::default()
        },
    }
}

impl Table {
    /// A table whose first `left` columns name the row (left-aligned) and whose others
    /// hold numbers.
    pub fn of<S: AsRef<str>>(header: &[S], rows: &[Vec<String>], left: usize) -> Table {
        let line = |cells: &mut dyn Iterator<Item = &str>| -> Vec<Cell> {
            cells
                .enumerate()
                .map(|(i, t)| text_cell(t, i < left))
                .collect()
        };
        Table {
            header: line(&mut header.iter().map(AsRef::as_ref)),
            rows: rows
                .iter()
                .map(|r| line(&mut r.iter().map(String::as_str)))
                .collect(),
        }
    }

    /// Name-value rows, the name as the row's heading.
    pub fn facts(rows: impl Iterator<Item = (String, String)>) -> Table {
        let cell = |text, head| Cell {
            text,
            left: true,
            head,
            ..Cell::default()
        };
        Table {
            header: Vec::new(),
            rows: rows
                .map(|(k, v)| vec![cell(k, true), cell(v, false)])
                .collect(),
        }
    }

    /// How many leading columns are names.
    pub fn left(&self) -> usize {
        self.header.iter().take_while(|c| c.left).count()
    }

    pub fn header_text(&self) -> Vec<&str> {
        self.header.iter().map(|c| c.text.as_str()).collect()
    }
}

/// A paragraph (bold or not) or a table.
#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct Block {
    pub text: String,
    pub bold: bool,
    pub table: Option<Table>,
}

impl Block {
    pub fn para(text: impl Into<String>) -> Block {
        Block {
            text: text.into(),
            bold: false,
            table: None,
        }
    }

    pub fn strong(text: impl Into<String>) -> Block {
        Block {
            bold: true,
            ..Block::para(text)
        }
    }

    pub fn table(t: Table) -> Block {
        Block {
            table: Some(t),
            ..Block::para("")
        }
    }
}

/// Which section it is, for a format that shows only some (the terminal shows the
/// gates and none of the rest).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Part {
    /// The per-cell table.
    #[default]
    Cells,
    Recommendation,
    Gates,
    /// A paired block's B against A.
    Paired,
    RateSearch,
    Confidence,
    Scalability,
    SideBySide,
    /// Per queue, plans, table health, faults and the other tables a run has when it
    /// has something for them.
    Detail,
}

/// A titled section: its blocks, then its how-to-read notes.
#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct Section {
    #[serde(skip)]
    pub part: Part,
    pub title: String,
    pub blocks: Vec<Block>,
    pub how: Vec<String>,
}

impl Section {
    /// A titled table with its how-to-read note.
    pub fn table<S: AsRef<str>>(
        title: &str,
        header: &[S],
        rows: &[Vec<String>],
        left: usize,
        how: &str,
    ) -> Section {
        Section {
            part: Part::Detail,
            title: title.to_string(),
            blocks: vec![Block::table(Table::of(header, rows, left))],
            how: vec![how.to_string()],
        }
    }

    pub fn part(self, part: Part) -> Section {
        Section { part, ..self }
    }

    /// The first table among its blocks.
    pub fn first_table(&self) -> Option<&Table> {
        self.blocks.iter().find_map(|b| b.table.as_ref())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_table_names_left_and_keeps_bold_as_bold() {
        let t = Table::of(
            &["a", "b", "c", "n"],
            &[vec!["x".into(), "y".into(), "z".into(), "**FAIL**".into()]],
            3,
        );
        assert!(t.header[2].left && !t.header[3].left);
        assert_eq!(t.left(), 3);
        assert!(t.rows[0][3].bold);
        assert_eq!(t.rows[0][3].text, "FAIL");
    }
}
