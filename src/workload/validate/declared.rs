//! `[strategies.<name>]` and `[layouts.<name>]`: a team's own SQL, read from files beside
//! the workload and checked before anything connects (its steps, parameters,
//! constants, model; what it may not run is `privileged_sql`'s).

use super::super::*;
use super::Validator;

impl Validator<'_> {
    /// A file a workload names, relative to the workload's own: its path as shown in
    /// messages and records, and its text.
    fn read_beside(&self, field: &str, path: &Path) -> Result<(String, String), WorkloadError> {
        let dir = match self.file.parent() {
            Some(d) if !d.as_os_str().is_empty() => d,
            _ => Path::new("."),
        };
        let full = dir.join(path);
        // Where it is, before it is opened: a link beside the workload to a file
        // elsewhere (or to /dev/zero) is elsewhere, and is never read.
        if self.files == Files::BesideOnly
            && full.exists()
            && !crate::input_file::inside(dir, &full)
        {
            return Err(self.err(
                field,
                format!(
                    "`{}` is outside the workload's folder; keep the file beside the workload (or below it), or pass --allow-outside-files",
                    path.display()
                ),
            ));
        }
        let text =
            crate::input_file::read_text(&full, crate::input_file::SQL_CAP, "a statement file")
                .map_err(|e| self.err(field, format!("cannot read {}: {e}", full.display())))?;
        Ok((full.display().to_string(), text))
    }

    /// Reads and checks `[table]`: the file of steps, relative to the workload.
    pub(in crate::workload) fn declare_table(
        &self,
        raw: Option<&raw::CustomTable>,
    ) -> Result<Option<crate::declared_table::DeclaredTable>, WorkloadError> {
        let Some(t) = raw else {
            return Ok(None);
        };
        crate::declared_table::check_name(&t.name).map_err(|m| self.err("table.name", m))?;
        if t.mssql.is_some() {
            return Err(self.err(
                "table.mssql",
                "is not built yet: a declared table runs on PostgreSQL and MySQL/MariaDB (give `postgres = \"file.sql\"` and/or `mysql = \"file.mysql.sql\"`); SQL Server's form is to come",
            ));
        }
        if t.postgres.is_none() && t.mysql.is_none() {
            return Err(self.err(
                "table.postgres",
                "is missing; give the file of steps (ddl, seed, complete, requeue, oldest, counts, …) relative to this workload, and/or `mysql = \"file.mysql.sql\"` for MySQL/MariaDB",
            ));
        }
        let (file, sql) = match &t.postgres {
            Some(path) => self.read_beside("table.postgres", path)?,
            None => Default::default(),
        };
        let mysql = match &t.mysql {
            Some(path) => {
                let (file, sql) = self.read_beside("table.mysql", path)?;
                Some(crate::strategy::custom::DeclaredFile { file, sql })
            }
            None => None,
        };
        for other in &t.also {
            crate::declared_table::check_name(other).map_err(|m| self.err("table.also", m))?;
        }
        let d = crate::declared_table::DeclaredTable {
            name: t.name.clone(),
            file,
            sql,
            also: t.also.clone(),
            mysql,
        };
        for (kind, field) in [
            (BackendKind::Postgres, "table.postgres"),
            (BackendKind::Mysql, "table.mysql"),
        ] {
            if d.file_for(kind).is_some() {
                crate::declared_table::form_for(&d, kind).map_err(|m| self.err(field, m))?;
            }
        }
        Ok(Some(d))
    }

    /// Reads and checks `[layouts.<name>]`: each DDL file, relative to the workload.
    pub(in crate::workload) fn declare_layouts(
        &self,
        raw: &BTreeMap<String, raw::CustomLayout>,
    ) -> Result<Vec<crate::custom_layout::DeclaredLayout>, WorkloadError> {
        let mut out = Vec::new();
        for (name, l) in raw {
            let f = |engine: &str| format!("layouts.{name}.{engine}");
            if l.postgres.is_none() && l.mysql.is_none() && l.mssql.is_none() {
                return Err(self.err(
                    &format!("layouts.{name}"),
                    "gives no DDL; name a file for `postgres`, `mysql` and/or `mssql`",
                ));
            }
            crate::custom_layout::check_name(name)
                .map_err(|m| self.err(&format!("layouts.{name}"), m))?;
            // One engine's form: read beside the workload and checked under its field.
            let form = |engine: &str, path: &Option<std::path::PathBuf>| match path {
                Some(p) => {
                    let (file, sql) = self.read_beside(&f(engine), p)?;
                    crate::custom_layout::check_form(&file, &sql)
                        .map_err(|m| self.err(&f(engine), m))?;
                    Ok(Some(crate::strategy::custom::DeclaredFile { file, sql }))
                }
                None => Ok(None),
            };
            let pg = form("postgres", &l.postgres)?.unwrap_or_default();
            out.push(crate::custom_layout::DeclaredLayout {
                name: name.clone(),
                file: pg.file,
                sql: pg.sql,
                mysql: form("mysql", &l.mysql)?,
                mssql: form("mssql", &l.mssql)?,
            });
        }
        Ok(out)
    }

    /// Reads and registers `[strategies.<name>]`: each statement file, relative to the
    /// workload, with what it promises.
    pub(in crate::workload) fn declare_strategies(
        &self,
        raw: &BTreeMap<String, raw::CustomStrategy>,
        on_declared_table: bool,
    ) -> Result<Vec<(Strategy, crate::strategy::custom::Declared)>, WorkloadError> {
        let mut out = Vec::new();
        for (name, c) in raw {
            let f = |x: &str| format!("strategies.{name}.{x}");
            if c.postgres.is_none() && c.mysql.is_none() && c.mssql.is_none() {
                return Err(self.err(
                    &f("postgres"),
                    "is missing; give the claim statement's file, relative to this workload (`postgres = \"claim.sql\"`, and/or `mysql = \"claim.mysql.sql\"` with steps `lock` and `claim`, and/or `mssql = \"claim.mssql.sql\"`)",
                ));
            }
            let (file, sql) = match &c.postgres {
                Some(path) => self.read_beside(&f("postgres"), path)?,
                None => Default::default(),
            };
            let mysql = match &c.mysql {
                Some(path) => {
                    let (file, sql) = self.read_beside(&f("mysql"), path)?;
                    Some(crate::strategy::custom::DeclaredFile { file, sql })
                }
                None => None,
            };
            let mssql = match &c.mssql {
                Some(path) => {
                    let (file, sql) = self.read_beside(&f("mssql"), path)?;
                    Some(crate::strategy::custom::DeclaredFile { file, sql })
                }
                None => None,
            };
            let promise = |p: &str| c.promises.iter().any(|x| x == p);
            for p in &c.promises {
                if !["prevents-duplicates", "respects-max-workers"].contains(&p.as_str()) {
                    return Err(self.err(
                        &f("promises"),
                        format!("unknown promise `{p}`; expected prevents-duplicates, respects-max-workers"),
                    ));
                }
            }
            let mut params = BTreeMap::new();
            for (k, v) in &c.params {
                use crate::strategy::custom::Constant;
                let value = match v {
                    toml::Value::Integer(n) => Constant::Int(*n),
                    toml::Value::Boolean(b) => Constant::Bool(*b),
                    toml::Value::String(t) if t.len() <= 1000 => Constant::Text(t.clone()),
                    other => {
                        return Err(self.err(
                            &f(&format!("params.{k}")),
                            format!(
                                "is {}; a constant is an integer, a boolean or a string of at most 1000 bytes (a number with a fraction as a string, cast in the statement: :{k}::text::numeric)",
                                other.type_str()
                            ),
                        ));
                    }
                };
                params.insert(k.clone(), value);
            }
            let model = match c.model.as_deref() {
                None | Some("none") => None,
                Some(m) => Some(crate::model::ModelRef::parse(m).ok_or_else(|| {
                    self.err(
                        &f("model"),
                        format!(
                            "unknown model `{m}`; expected seed (the seed's order and per-queue caps), uncapped (its order, no caps), advisory (its order within a window read before locking) or none"
                        ),
                    )
                })?),
            };
            let order = match (&c.order, model) {
                (None, _) => Vec::new(),
                (Some(keys), Some(crate::model::ModelRef::Uncapped)) if !keys.is_empty() => keys
                    .iter()
                    .map(|k| {
                        crate::model::OrderKey::parse(k).ok_or_else(|| {
                            self.err(
                                &f("order"),
                                format!(
                                    "unknown column `{k}`; the model orders by priority (highest first), due (scheduled, else created), created and id (ties are broken by id)"
                                ),
                            )
                        })
                    })
                    .collect::<Result<Vec<_>, _>>()?,
                (Some(_), Some(crate::model::ModelRef::Uncapped)) => {
                    return Err(self.err(
                        &f("order"),
                        "is empty; list the columns the claim orders by, e.g. [\"priority\", \"id\"]".to_string(),
                    ));
                }
                (Some(_), _) => {
                    return Err(self.err(
                        &f("order"),
                        "is the uncapped model's order; give it with model = \"uncapped\" (the seed's and the advisory model's order is the seed's)".to_string(),
                    ));
                }
            };
            let pauses_in_worker = match c.pauses.as_deref() {
                None | Some("claim") => false,
                Some("worker") => true,
                Some(other) => {
                    return Err(self.err(
                        &f("pauses"),
                        format!(
                            "unknown `{other}`; expected claim (the claim leaves out jobs of paused and inactive queues: the default) or worker (the claim takes them and the library's workers pause; the model check's model takes them too)"
                        ),
                    ));
                }
            };
            let d = crate::strategy::custom::Declared {
                name: name.clone(),
                file,
                sql,
                mysql,
                mssql,
                prevents_duplicates: promise("prevents-duplicates"),
                respects_max_workers: promise("respects-max-workers"),
                listens: c.listens,
                params,
                model,
                order,
                pauses_in_worker,
                on_declared_table,
            };
            // The message names its file; the field is the engine whose file it is (or
            // the constants, for theirs).
            let s = crate::strategy::custom::declare(&d).map_err(|m| {
                let engine = match &d.mysql {
                    _ if m.0.starts_with("params") => "params",
                    _ if d.mssql.as_ref().is_some_and(|ms| m.0.starts_with(&ms.file)) => "mssql",
                    Some(my) if d.file.is_empty() || m.0.starts_with(&my.file) => "mysql",
                    _ => "postgres",
                };
                self.err(&f(engine), m)
            })?;
            out.push((s, d));
        }
        Ok(out)
    }
}
