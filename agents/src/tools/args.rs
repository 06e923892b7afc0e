//! Tool arguments are parsed once, here, into typed values; every way they can be wrong is
//! a bounded [`ArgError`] that becomes a typed refusal, never a panic or free text. Each
//! tool declares its arguments once, as a named struct ([`tool_args!`]): the JSON Schema the
//! model sees and the parsing are both derived from that one list, so they cannot drift.

use chrono_tz::Tz;
use serde::Serialize;
use serde_json::{json, Map, Value};

use crate::time::{DueAt, IsoDate};

/// Longest text a tool stores (characters).
pub const MAX_TEXT_CHARS: usize = 2000;
/// Longest name (project) a tool stores (characters).
pub const MAX_NAME_CHARS: usize = 120;

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Expected {
    Text,
    Integer,
    Boolean,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(tag = "problem", rename_all = "snake_case")]
pub enum ArgProblem {
    /// The arguments are not a JSON object (or not JSON at all).
    NotAnObject,
    Missing,
    WrongType {
        expected: Expected,
    },
    Empty,
    TooLong {
        max: usize,
    },
    /// Not an ISO 8601 date (`YYYY-MM-DD`).
    BadDate,
    /// Not an ISO 8601 date-time.
    BadDateTime,
    /// An id must be a positive integer.
    NotPositive,
    /// Not one of the allowed values (e.g. a project status).
    NotAllowed,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct ArgError {
    /// The argument's name as in the JSON Schema (a fixed string of the code).
    pub field: &'static str,
    #[serde(flatten)]
    pub problem: ArgProblem,
}

impl ArgError {
    pub fn new(field: &'static str, problem: ArgProblem) -> Self {
        Self { field, problem }
    }
}

/// The JSON object a model sent, with typed accessors.
#[derive(Debug)]
pub struct Args {
    map: Map<String, Value>,
}

impl Args {
    /// `null` counts as `{}` (models send it for tools without arguments); a JSON string
    /// holding an object is unwrapped (the wire format carries arguments as a string).
    pub fn parse(raw: &Value) -> Result<Self, ArgError> {
        match raw {
            Value::Null => Ok(Self { map: Map::new() }),
            Value::Object(map) => Ok(Self { map: map.clone() }),
            Value::String(s) if s.trim().is_empty() => Ok(Self { map: Map::new() }),
            Value::String(s) => match serde_json::from_str::<Value>(s) {
                Ok(Value::Object(map)) => Ok(Self { map }),
                _ => Err(ArgError::new("arguments", ArgProblem::NotAnObject)),
            },
            _ => Err(ArgError::new("arguments", ArgProblem::NotAnObject)),
        }
    }

    fn present(&self, field: &str) -> Option<&Value> {
        self.map.get(field).filter(|v| !v.is_null())
    }

    fn bounded(field: &'static str, raw: &str, max: usize) -> Result<String, ArgError> {
        let text = raw.trim();
        if text.is_empty() {
            return Err(ArgError::new(field, ArgProblem::Empty));
        }
        if text.chars().count() > max {
            return Err(ArgError::new(field, ArgProblem::TooLong { max }));
        }
        Ok(text.to_string())
    }

    fn string(&self, field: &'static str) -> Result<Option<&str>, ArgError> {
        match self.present(field) {
            None => Ok(None),
            Some(Value::String(s)) => Ok(Some(s)),
            Some(_) => Err(ArgError::new(field, ArgProblem::WrongType { expected: Expected::Text })),
        }
    }

    /// A required, non-empty text of at most [`MAX_TEXT_CHARS`].
    pub fn text(&self, field: &'static str) -> Result<String, ArgError> {
        let raw = self.string(field)?.ok_or(ArgError::new(field, ArgProblem::Missing))?;
        Self::bounded(field, raw, MAX_TEXT_CHARS)
    }

    /// A required name of at most [`MAX_NAME_CHARS`].
    pub fn name(&self, field: &'static str) -> Result<String, ArgError> {
        let raw = self.string(field)?.ok_or(ArgError::new(field, ArgProblem::Missing))?;
        Self::bounded(field, raw, MAX_NAME_CHARS)
    }

    /// An optional text; an empty string counts as absent.
    pub fn opt_text(&self, field: &'static str) -> Result<Option<String>, ArgError> {
        match self.string(field)? {
            None => Ok(None),
            Some(s) if s.trim().is_empty() => Ok(None),
            Some(s) => Self::bounded(field, s, MAX_TEXT_CHARS).map(Some),
        }
    }

    /// An optional name; an empty string counts as absent.
    pub fn opt_name(&self, field: &'static str) -> Result<Option<String>, ArgError> {
        match self.string(field)? {
            None => Ok(None),
            Some(s) if s.trim().is_empty() => Ok(None),
            Some(s) => Self::bounded(field, s, MAX_NAME_CHARS).map(Some),
        }
    }

    /// A required positive id; a string of digits is accepted ("12"), models send both.
    pub fn id(&self, field: &'static str) -> Result<i64, ArgError> {
        let wrong = ArgError::new(field, ArgProblem::WrongType { expected: Expected::Integer });
        let id = match self.present(field) {
            None => return Err(ArgError::new(field, ArgProblem::Missing)),
            Some(Value::Number(n)) => n.as_i64().ok_or(wrong)?,
            Some(Value::String(s)) => s.trim().trim_start_matches('#').parse::<i64>().map_err(|_| wrong)?,
            Some(_) => return Err(wrong),
        };
        if id <= 0 {
            return Err(ArgError::new(field, ArgProblem::NotPositive));
        }
        Ok(id)
    }

    /// An optional whole number (may be negative; a string of digits is accepted).
    pub fn opt_int(&self, field: &'static str) -> Result<Option<i64>, ArgError> {
        let wrong = ArgError::new(field, ArgProblem::WrongType { expected: Expected::Integer });
        match self.present(field) {
            None => Ok(None),
            Some(Value::Number(n)) => n.as_i64().map(Some).ok_or(wrong),
            Some(Value::String(s)) if s.trim().is_empty() => Ok(None),
            Some(Value::String(s)) => s.trim().parse::<i64>().map(Some).map_err(|_| wrong),
            Some(_) => Err(wrong),
        }
    }

    /// A required whole number within `range` (seconds of a timer…).
    pub fn int_in(&self, field: &'static str, range: std::ops::RangeInclusive<i64>) -> Result<i64, ArgError> {
        let v = self.opt_int(field)?.ok_or(ArgError::new(field, ArgProblem::Missing))?;
        if !range.contains(&v) {
            return Err(ArgError::new(field, if v <= 0 { ArgProblem::NotPositive } else { ArgProblem::NotAllowed }));
        }
        Ok(v)
    }

    pub fn opt_bool(&self, field: &'static str) -> Result<Option<bool>, ArgError> {
        match self.present(field) {
            None => Ok(None),
            Some(Value::Bool(b)) => Ok(Some(*b)),
            Some(Value::String(s)) if s == "true" || s == "false" => Ok(Some(s == "true")),
            Some(_) => Err(ArgError::new(field, ArgProblem::WrongType { expected: Expected::Boolean })),
        }
    }

    pub fn date(&self, field: &'static str) -> Result<IsoDate, ArgError> {
        self.opt_date(field)?.ok_or(ArgError::new(field, ArgProblem::Missing))
    }

    pub fn opt_date(&self, field: &'static str) -> Result<Option<IsoDate>, ArgError> {
        match self.string(field)? {
            None => Ok(None),
            Some(s) if s.trim().is_empty() => Ok(None),
            Some(s) => IsoDate::parse(s).map(Some).ok_or(ArgError::new(field, ArgProblem::BadDate)),
        }
    }

    /// A required due date-time; returns it and whether it was a bare date.
    pub fn due(&self, field: &'static str, tz: Tz) -> Result<(DueAt, bool), ArgError> {
        let raw = self.string(field)?.ok_or(ArgError::new(field, ArgProblem::Missing))?;
        if raw.trim().is_empty() {
            return Err(ArgError::new(field, ArgProblem::Empty));
        }
        DueAt::parse_with_kind(raw, tz).ok_or(ArgError::new(field, ArgProblem::BadDateTime))
    }
}

/// One kind of argument: how the JSON Schema describes it and how a call's value is read.
pub trait ArgField {
    /// What the tool receives.
    type Value;
    /// Listed in the schema's `required`.
    const REQUIRED: bool;
    /// Its JSON Schema; `description` is empty when the name says it all.
    fn schema(description: &str) -> Value;
    fn read(args: &Args, field: &'static str, tz: Tz) -> Result<Self::Value, ArgError>;
}

/// A tool's arguments as one named struct: the schema and the parsing come from the same
/// declaration ([`tool_args!`]); `()` is a tool without arguments.
pub trait ToolArgs: Sized {
    fn schema() -> Value;
    /// Reads the fields in their declared order: the first wrong one is the refusal.
    fn read(args: &Args, tz: Tz) -> Result<Self, ArgError>;
}

impl ToolArgs for () {
    fn schema() -> Value {
        object_schema(&[])
    }
    fn read(_: &Args, _: Tz) -> Result<Self, ArgError> {
        Ok(())
    }
}

/// Declares tools' arguments once: `name: Kind` (or `name: Kind = "description"`) per
/// field, the JSON name being the Rust one. Gives each struct, its schema and its parsing.
macro_rules! tool_args {
    ($($(#[$meta:meta])* pub struct $name:ident {
        $($(#[$fmeta:meta])* $field:ident : $kind:ty $(= $desc:literal)?),* $(,)?
    })*) => {$(
        $(#[$meta])*
        #[derive(Debug)]
        pub struct $name {
            $($(#[$fmeta])* pub $field: <$kind as $crate::tools::args::ArgField>::Value,)*
        }

        impl $crate::tools::args::ToolArgs for $name {
            fn schema() -> ::serde_json::Value {
                $crate::tools::args::object_schema(&[$((
                    stringify!($field),
                    <$kind as $crate::tools::args::ArgField>::schema(concat!("" $(, $desc)?)),
                    <$kind as $crate::tools::args::ArgField>::REQUIRED,
                )),*])
            }
            fn read(
                args: &$crate::tools::args::Args,
                tz: ::chrono_tz::Tz,
            ) -> Result<Self, $crate::tools::args::ArgError> {
                Ok(Self { $($field: <$kind as $crate::tools::args::ArgField>::read(args, stringify!($field), tz)?,)* })
            }
        }
    )*};
}
pub(crate) use tool_args;

/// JSON Schema of an object: `(name, schema, required)` per property.
pub fn object_schema(properties: &[(&str, Value, bool)]) -> Value {
    let props: Map<String, Value> = properties.iter().map(|(k, v, _)| (k.to_string(), v.clone())).collect();
    let required: Vec<&str> = properties.iter().filter(|(_, _, r)| *r).map(|(k, _, _)| *k).collect();
    // Compact on purpose: every byte here is sent with every model call.
    if required.is_empty() {
        json!({"type": "object", "properties": props})
    } else {
        json!({"type": "object", "properties": props, "required": required})
    }
}

/// A property of one JSON type; the description only when the name does not say it all.
pub fn typed_schema(ty: &str, description: &str) -> Value {
    if description.is_empty() {
        json!({"type": ty})
    } else {
        json!({"type": ty, "description": description})
    }
}

/// A string out of a closed list.
pub fn enum_schema(values: &[&str]) -> Value {
    json!({"type": "string", "enum": values})
}

/// Declares a kind of argument: the value a tool receives, whether it is required, its
/// schema from the field's description, and how it is read from the call.
macro_rules! arg_kind {
    ($(
        $(#[$meta:meta])*
        $kind:ident: $value:ty, required = $req:literal,
        schema |$d:ident| $schema:expr, read |$a:ident, $f:ident, $tz:pat_param| $read:expr;
    )*) => {$(
        $(#[$meta])*
        pub struct $kind;
        impl $crate::tools::args::ArgField for $kind {
            type Value = $value;
            const REQUIRED: bool = $req;
            fn schema($d: &str) -> ::serde_json::Value {
                $schema
            }
            fn read(
                $a: &$crate::tools::args::Args,
                $f: &'static str,
                $tz: ::chrono_tz::Tz,
            ) -> Result<$value, $crate::tools::args::ArgError> {
                $read
            }
        }
    )*};
}
pub(crate) use arg_kind;

arg_kind! {
    /// A required, non-empty text of at most [`MAX_TEXT_CHARS`].
    Text: String, required = true, schema |d| typed_schema("string", d), read |a, f, _| a.text(f);
    /// A required name of at most [`MAX_NAME_CHARS`].
    Name: String, required = true, schema |d| typed_schema("string", d), read |a, f, _| a.name(f);
    /// An optional text; empty counts as absent.
    OptText: Option<String>, required = false, schema |d| typed_schema("string", d), read |a, f, _| a.opt_text(f);
    /// An optional name (or filter words); empty counts as absent.
    OptName: Option<String>, required = false, schema |d| typed_schema("string", d), read |a, f, _| a.opt_name(f);
    /// A required positive id.
    Id: i64, required = true, schema |d| typed_schema("integer", d), read |a, f, _| a.id(f);
    /// An optional whole number.
    OptInt: Option<i64>, required = false, schema |d| typed_schema("integer", d), read |a, f, _| a.opt_int(f);
    /// An optional yes/no, no when absent.
    Flag: bool, required = false, schema |d| typed_schema("boolean", d),
        read |a, f, _| Ok(a.opt_bool(f)?.unwrap_or(false));
    /// A required ISO date.
    Date: IsoDate, required = true, schema |d| typed_schema("string", d), read |a, f, _| a.date(f);
    /// An optional ISO date.
    OptDate: Option<IsoDate>, required = false, schema |d| typed_schema("string", d), read |a, f, _| a.opt_date(f);
    /// A required due date-time in the user's zone, and whether it was a bare date.
    Due: (DueAt, bool), required = true, schema |d| typed_schema("string", d), read |a, f, tz| a.due(f, tz);
}

/// What an argument holds, with its article, for the user (« le texte », « l'échéance »):
/// declared beside the arguments so a new argument name is labelled where it is added.
pub fn field(name: &str) -> &'static str {
    match name {
        "texte" => "le texte",
        "echeance" => "l'échéance",
        "id" => "le numéro",
        "projet" => "le projet",
        "nom" => "le nom",
        "description" => "la description",
        "phase" => "la phase",
        "statut" => "le statut",
        "debut" => "la date de début",
        "fin" => "la date de fin",
        "requete" => "ce qu'il faut chercher",
        "periode" => "la période",
        "inclure_faits" => "le choix d'inclure les rappels faits",
        "contient" => "les mots cherchés",
        "duree_secondes" => "la durée",
        "duree_initiale_secondes" => "la durée du minuteur visé",
        "ajout_secondes" => "le temps à ajouter",
        "delta_secondes" => "le temps à ajouter ou à retirer",
        "action" => "le changement demandé",
        "liste" => "la liste",
        "tous" => "le choix de tous les arrêter",
        "element" => "l'élément",
        "frequence" => "la fréquence",
        "intervalle" => "l'intervalle",
        "heure" => "l'heure du réveil",
        "derniers" => "le nombre des derniers",
        _ => "une donnée de la demande",
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    tool_args! {
        pub struct Sample { b: OptInt = "en secondes", a: Text }
    }

    #[test]
    fn the_schema_and_the_parsing_come_from_one_declaration() {
        assert_eq!(
            Sample::schema(),
            json!({"type": "object", "required": ["a"], "properties": {
                "a": {"type": "string"}, "b": {"type": "integer", "description": "en secondes"}}})
        );
        let tz = chrono_tz::UTC;
        let s = Sample::read(&Args::parse(&json!({"a": " x ", "b": "3"})).unwrap(), tz).unwrap();
        assert_eq!((s.a.as_str(), s.b), ("x", Some(3)));
        // Read in the declared order: the first wrong field is the one said.
        let e = Sample::read(&Args::parse(&json!({"b": "trois"})).unwrap(), tz).unwrap_err();
        assert_eq!(e, ArgError::new("b", ArgProblem::WrongType { expected: Expected::Integer }));
        let e = Sample::read(&Args::parse(&json!({})).unwrap(), tz).unwrap_err();
        assert_eq!(e, ArgError::new("a", ArgProblem::Missing));
    }

    #[test]
    fn ids_accept_digit_strings_and_refuse_the_rest() {
        let a = Args::parse(&json!({"id": "12", "b": 3, "c": true, "d": -1, "e": 1.5})).unwrap();
        assert_eq!(a.id("id"), Ok(12));
        assert_eq!(a.id("b"), Ok(3));
        assert_eq!(a.id("c").unwrap_err().problem, ArgProblem::WrongType { expected: Expected::Integer });
        assert_eq!(a.id("d").unwrap_err().problem, ArgProblem::NotPositive);
        assert_eq!(a.id("e").unwrap_err().problem, ArgProblem::WrongType { expected: Expected::Integer });
        assert_eq!(a.id("zz").unwrap_err().problem, ArgProblem::Missing);
    }

    #[test]
    fn arguments_may_arrive_as_a_json_string() {
        let a = Args::parse(&json!("{\"texte\": \"pain\"}")).unwrap();
        assert_eq!(a.text("texte").unwrap(), "pain");
        assert_eq!(Args::parse(&json!("not json")).unwrap_err().problem, ArgProblem::NotAnObject);
        assert_eq!(Args::parse(&json!([1])).unwrap_err().problem, ArgProblem::NotAnObject);
    }

    #[test]
    fn texts_are_trimmed_bounded_and_never_empty() {
        let long = "x".repeat(MAX_TEXT_CHARS + 1);
        let a = Args::parse(&json!({"t": "  pain  ", "e": "   ", "l": long, "n": 3})).unwrap();
        assert_eq!(a.text("t").unwrap(), "pain");
        assert_eq!(a.text("e").unwrap_err().problem, ArgProblem::Empty);
        assert_eq!(a.text("l").unwrap_err().problem, ArgProblem::TooLong { max: MAX_TEXT_CHARS });
        assert_eq!(a.text("n").unwrap_err().problem, ArgProblem::WrongType { expected: Expected::Text });
        assert_eq!(a.opt_text("e").unwrap(), None);
    }
}
