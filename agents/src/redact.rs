//! The one redaction of the house. Secrets never reach the journal, the logs or an error
//! (spec §4.3): every stream-json event of an Atlas run is passed through [`redact_json`] (or
//! its text through [`redact`]) before it is written, so database passwords, `.env` lines,
//! private keys and API tokens that an agent printed are replaced by `[REDACTED:<kind>]`; a
//! database error quoting its URL, a provider echoing its key and an SMTP server echoing its
//! password go through [`redact_known`] (the secret we hold, then every pattern).
//!
//! One combined regex finds every kind in a single pass of the lazy DFA; a clean event (the
//! common case) costs one scan. A match only names a candidate: the code then refuses the
//! ones that are not secrets (a marker already there, a `$VAR` reference, an `sk-` word that
//! is not random) and searches on from the next character, so a refused candidate never hides
//! a real secret behind it. The patterns also work on raw JSON text (`\"` and `\n` escapes)
//! and never replace across an unescaped `"`, so redacting a valid JSON line keeps it valid.
//!
//! False-positive choices: code that only *names* a secret is kept (`password_hash =
//! bcrypt(pw)`, `token = get_token()`, `API_TOKEN = os.environ["API_TOKEN"]`, `$DB_PASSWORD`),
//! a literal assigned to such a name is redacted (`password = "hunter2"`, `password=pw` as
//! in a DSN or keyword argument). Upper-case keys count only when a whole `_`-separated part
//! names a secret (`GITHUB_TOKEN`, `PGPASSWORD`; not `MAX_TOKENS`, `AUTHOR`, `PWD`).
//! Placeholder URLs such as `postgres://user:password@localhost` are redacted too: cheaper
//! than guessing which passwords are examples.

use std::borrow::Cow;
use std::sync::LazyLock;

use regex::{Captures, Regex, RegexBuilder};
use serde_json::Value;

/// One kind of secret: the name its marker shows and its pattern. In the pattern, each
/// `(?P<s>…)` is the part replaced (the rest, such as `postgres://user:` or `DB_PASSWORD=`,
/// is kept); without one the whole match is the secret. Only non-capturing groups otherwise.
struct Kind {
    name: &'static str,
    pattern: &'static str,
}

/// In priority order: when two kinds match at the same position, the first listed wins.
const KINDS: &[Kind] = &[
    Kind {
        name: "private_key",
        // The body never crosses an unescaped quote (a JSON string boundary). A block cut
        // before its END line is redacted over its whole lines of base64 (and headers such as
        // `Proc-Type: 4,ENCRYPTED`), never part of a line: that part could be another
        // secret's context.
        pattern: concat!(
            r#"-----BEGIN[ A-Z0-9]*PRIVATE KEY(?: BLOCK)?-----(?:[^"\\]|\\(?s:.))*?-----END[ A-Z0-9]*PRIVATE KEY(?: BLOCK)?-----"#,
            r#"|(?P<s>-----BEGIN[ A-Z0-9]*PRIVATE KEY(?: BLOCK)?-----(?:[ \t]*(?:\r?\n|\\[nr])[A-Za-z0-9+/=:,. \-]*)*)"#,
            r#"[ \t]*(?:\r?\n|\\[nr]|\\?["']|$)"#,
        ),
    },
    Kind {
        name: "url_password",
        // Any `scheme://user:password@`: the password runs to the last `@` before the path.
        pattern: r#"(?-u:\b)[A-Za-z][A-Za-z0-9+.\-]*://[^\s:/@"'\\<>]*:(?P<s>[^\s/?#"'\\<>]+)@"#,
    },
    Kind {
        name: "aws_secret",
        pattern: r#"(?i)aws_?(?:secret_?access_?key|session_?token)(?:\\?["'])?[ \t]*[:=][ \t]*(?:\\?["'])?(?P<s>[^\s"'\\,;]{16,})"#,
    },
    Kind {
        name: "authorization",
        pattern: r#"(?i)authorization(?:\\?["'])?[ \t]*[:=][ \t]*(?:\\?["'])?(?:bearer|basic|token|digest)[ \t]+(?P<s>[A-Za-z0-9._~+/=\-]+)"#,
    },
    Kind {
        name: "env_secret",
        // `KEY=value`, `export KEY="value"`: upper-case key with a part naming a secret, at a
        // word boundary or right after an escaped newline or a colour code (`\nDB_PASSWORD=`).
        pattern: concat!(
            r#"(?:\\[nrt]|\\u001b\[[0-9;]*m|\x1b\[[0-9;]*m|(?-u:\b))(?:(?:[A-Z0-9]+_)*(?:[A-Z0-9]*(?:PASSWORD|PASSWD|PASSPHRASE|SECRET|TOKEN|APIKEY|CREDENTIALS?)|API_KEY|ACCESS_KEY|SIGNING_KEY|ENCRYPTION_KEY|PRIVATE|AUTH)(?:_[A-Z0-9]+)*|(?:[A-Z0-9]+_)+PWD(?:_[A-Z0-9]+)*)"#,
            r#"[ \t]*=[ \t]*"#,
            r#"(?:"(?P<s>[^"\s,:\]}\\][^"\r\n]*)"|'(?P<s>[^'"\r\n]+)'|\\"(?P<s>(?:[^"\\\s]|\\[^"nr\r\n])(?:[^"\\\r\n]|\\[^"nr\r\n])*)\\"|(?P<s>(?:[^\s"'\\=]|\\[^nrt"'\\])(?:[^\s"'\\]|\\[^nrt"'\\])*))"#,
        ),
    },
    Kind {
        name: "env_secret",
        // The YAML / docker-compose form, at the start of a line only (`KEY: value`).
        pattern: concat!(
            r#"(?:(?m:^)|\\n)[ \t]*(?:-[ \t]+)?"#,
            r#"(?:(?:[A-Z0-9]+_)*(?:[A-Z0-9]*(?:PASSWORD|PASSWD|PASSPHRASE|SECRET|TOKEN|APIKEY|CREDENTIALS?)|API_KEY|ACCESS_KEY|PRIVATE_KEY)(?:_[A-Z0-9]+)*)"#,
            r#":[ \t]+(?P<s>(?:[^\s"'\\]|\\[^nrt"'\\])+)"#,
        ),
    },
    Kind {
        name: "secret_field",
        // `"password": "…"`, `token = '…'`, `\"api_key\": \"…\"`: a quoted value under a key
        // ending with a secret's name. The value never starts like JSON structure, so a key
        // at the end of one JSON string cannot pair with the next string.
        pattern: concat!(
            r#"(?i)(?-u:\b)[a-z0-9_\-]*(?:password|passwd|passphrase|secret|token|api[_\-]?key|private[_\-]?key|access[_\-]?key|credentials?|authorization|auth|cookie)"#,
            r#"(?:\\?["'])?[ \t]*[:=][ \t]*"#,
            r#"(?:\\?"(?P<s>(?:[^"\\\s,:\]}]|\\[^"nr\r\n])(?:[^"\\\r\n]|\\[^"nr\r\n])*)\\?"|'(?P<s>[^'"\s,:\]}][^'"\r\n]*)')"#,
        ),
    },
    Kind {
        name: "password",
        // `password=…` without spaces: DSNs, query strings, keyword arguments.
        pattern: r#"(?i)(?-u:\b)[a-z0-9_]*(?:password|passwd|passphrase)=(?P<s>[^\s"'\\&;,<>)=][^\s"'\\&;,<>)]*)"#,
    },
    Kind {
        name: "cli_secret",
        pattern: r#"(?i)--[a-z0-9\-]*(?:password|passwd|token|secret|api-?key)[ =](?P<s>[^\s"'\\\-][^\s"'\\]*)"#,
    },
    // `sk-` keys: after a separator, an escaped newline or a colour code, never inside a word.
    Kind {
        name: "anthropic_key",
        pattern: r"(?:^|[^A-Za-z0-9_]|\\[nrt]|\\u001b\[[0-9;]*m|\x1b\[[0-9;]*m)(?P<s>sk-ant-[A-Za-z0-9_\-]{20,})",
    },
    Kind {
        name: "openai_key",
        pattern: r"(?:^|[^A-Za-z0-9_]|\\[nrt]|\\u001b\[[0-9;]*m|\x1b\[[0-9;]*m)(?P<s>sk-(?:proj-|svcacct-|admin-)?[A-Za-z0-9_\-]{20,})",
    },
    Kind {
        name: "stripe_key",
        // Not right after a backslash: in raw JSON `\rk_live_…` is a carriage return.
        pattern: r"(?:^|[^A-Za-z0-9_\\]|\\[nrt])(?P<s>(?:sk|rk)_(?:live|test)_[A-Za-z0-9]{16,})",
    },
    Kind { name: "github_token", pattern: r"(?:gh[pousr]_[A-Za-z0-9]{30,}|github_pat_[A-Za-z0-9_]{30,})" },
    Kind { name: "gitlab_token", pattern: r"glpat-[A-Za-z0-9_\-]{20,}" },
    Kind { name: "slack_token", pattern: r"xox[abprse]-[A-Za-z0-9\-]{10,}" },
    Kind { name: "aws_access_key", pattern: r"(?:AKIA|ASIA)[0-9A-Z]{16}" },
    Kind { name: "google_api_key", pattern: r"AIza[0-9A-Za-z_\-]{35}" },
    Kind { name: "jwt", pattern: r"eyJ[A-Za-z0-9_\-]{4,}\.eyJ[A-Za-z0-9_\-]{4,}\.[A-Za-z0-9_\-]*" },
    Kind { name: "bearer_token", pattern: r"(?i:bearer)[ \t]+(?P<s>[A-Za-z0-9._~+/\-]{20,}=*)" },
];

/// The kinds whose value may legitimately be a reference to a secret kept elsewhere.
const REFERENCE_KINDS: &[&str] = &["env_secret", "secret_field", "password", "cli_secret", "aws_secret"];

/// Values that read a secret rather than contain it (`API_TOKEN = os.environ["API_TOKEN"]`).
const CODE_REFERENCES: &[&str] = &[
    "os.environ",
    "os.getenv",
    "process.env",
    "env::var",
    "std::env",
    "getenv(",
    "System.getenv",
    "ENV[",
    "ENV.fetch",
];

/// Passes over a text until nothing changes: replacing one secret can let a pattern see
/// another (a token used as a URL's user name), and a fixpoint makes redaction idempotent.
const MAX_PASSES: usize = 4;

/// The combined regex and, per kind, the indexes of its whole group and its secret groups.
struct Redactor {
    regex: Regex,
    groups: Vec<(usize, Vec<usize>)>,
}

static REDACTOR: LazyLock<Redactor> = LazyLock::new(|| {
    let mut combined = String::new();
    for (i, kind) in KINDS.iter().enumerate() {
        if i > 0 {
            combined.push('|');
        }
        let pattern = kind
            .pattern
            .split("(?P<s>")
            .enumerate()
            .map(|(j, piece)| if j == 0 { piece.to_string() } else { format!("(?P<s{i}_{j}>{piece}") })
            .collect::<String>();
        combined.push_str(&format!("(?P<k{i}>{pattern})"));
    }
    // A larger lazy-DFA cache than the default: the alternation is wide and a cache that
    // keeps being cleared would drop the search to the slow engine.
    let regex = RegexBuilder::new(&combined).dfa_size_limit(8 << 20).build().expect("redaction patterns compile");
    let index = |name: &str| regex.capture_names().position(|n| n == Some(name));
    let groups = (0..KINDS.len())
        .map(|i| {
            let whole = index(&format!("k{i}")).expect("every kind has its group");
            let secrets = (1..).map_while(|j| index(&format!("s{i}_{j}"))).collect();
            (whole, secrets)
        })
        .collect();
    Redactor { regex, groups }
});

/// Replaces every secret in `text` by a marker such as `[REDACTED:kind]`; returns the text
/// and how many were replaced. Text without secrets comes back borrowed.
pub fn redact(text: &str) -> (Cow<'_, str>, usize) {
    let mut current: Cow<'_, str> = Cow::Borrowed(text);
    let mut total = 0;
    for _ in 0..MAX_PASSES {
        match redact_pass(&current) {
            Some((next, count)) => {
                total += count;
                current = Cow::Owned(next);
            }
            None => break,
        }
    }
    (current, total)
}

/// [`redact`], after replacing every occurrence of `secret` (a key or password this process
/// holds, which may match no pattern) by `[REDACTED]`.
pub fn redact_known(text: &str, secret: &str) -> String {
    let text = if secret.is_empty() { Cow::Borrowed(text) } else { Cow::Owned(text.replace(secret, "[REDACTED]")) };
    redact(&text).0.into_owned()
}

/// One left-to-right pass; `None` when nothing was replaced.
fn redact_pass(text: &str) -> Option<(String, usize)> {
    let redactor = &*REDACTOR;
    let mut out = String::new();
    let mut copied_up_to = 0;
    let mut search_from = 0;
    let mut count = 0;
    while search_from <= text.len() {
        let Some(caps) = redactor.regex.captures_at(text, search_from) else { break };
        let whole = caps.get(0).expect("group 0 always matches");
        let (kind, secret) = candidate(redactor, &caps);
        if !is_secret(kind, secret.as_str()) {
            // Not a secret: look again from the next character, so whatever this candidate
            // covered is still searched for other kinds.
            search_from = whole.start() + text[whole.start()..].chars().next().map_or(1, char::len_utf8);
            continue;
        }
        out.push_str(&text[copied_up_to..secret.start()]);
        out.push_str("[REDACTED:");
        out.push_str(kind);
        out.push(']');
        copied_up_to = secret.end();
        search_from = whole.end().max(secret.end());
        count += 1;
    }
    if count == 0 {
        return None;
    }
    out.push_str(&text[copied_up_to..]);
    Some((out, count))
}

/// Which kind matched, and the part to replace.
fn candidate<'t>(redactor: &Redactor, caps: &Captures<'t>) -> (&'static str, regex::Match<'t>) {
    for (kind, (whole, secrets)) in KINDS.iter().zip(&redactor.groups) {
        if let Some(matched) = caps.get(*whole) {
            let secret = secrets.iter().find_map(|&g| caps.get(g)).unwrap_or(matched);
            return (kind.name, secret);
        }
    }
    unreachable!("the combined regex only matches through a kind's group")
}

/// Whether a candidate really is a secret to replace.
fn is_secret(kind: &str, value: &str) -> bool {
    // Already redacted, possibly with context kept around the marker (`Bearer [REDACTED:…]`).
    if value.contains("[REDACTED:") {
        return false;
    }
    let bare = value.trim_matches(|c| c == '"' || c == '\'' || c == '\\');
    if REFERENCE_KINDS.contains(&kind)
        && (bare.starts_with('$') || CODE_REFERENCES.iter().any(|prefix| bare.starts_with(prefix)))
    {
        return false;
    }
    if kind == "openai_key" {
        // `sk-` followed by a kebab-case word is not a key: real keys are random, so they
        // mix digits and both cases.
        let tail = value.trim_start_matches("sk-");
        return tail.bytes().any(|b| b.is_ascii_digit())
            && tail.bytes().any(|b| b.is_ascii_uppercase())
            && tail.bytes().any(|b| b.is_ascii_lowercase());
    }
    true
}

/// `[REDACTED:kind]`, as this module writes it.
fn is_marker(s: &str) -> bool {
    s.strip_prefix("[REDACTED:")
        .and_then(|rest| rest.strip_suffix(']'))
        .is_some_and(|kind| !kind.is_empty() && kind.bytes().all(|b| b.is_ascii_lowercase() || b == b'_'))
}

/// Redacts every string inside a JSON value: keys are kept, a string under a key named like
/// a secret (password, secret, token, api_key, authorization, credentials, cookie…) is
/// replaced whole, every other string goes through [`redact`]. Returns how many were replaced.
pub fn redact_json(value: &mut Value) -> usize {
    match value {
        Value::String(s) => match redact(s) {
            (Cow::Owned(clean), n) => {
                *s = clean;
                n
            }
            (Cow::Borrowed(_), _) => 0,
        },
        Value::Array(items) => items.iter_mut().map(redact_json).sum(),
        Value::Object(map) => {
            map.iter_mut().map(|(key, v)| if is_secret_key(key) { redact_whole(v) } else { redact_json(v) }).sum()
        }
        Value::Null | Value::Bool(_) | Value::Number(_) => 0,
    }
}

/// Every non-empty string under a secret's key becomes one marker.
fn redact_whole(value: &mut Value) -> usize {
    match value {
        Value::String(s) if !s.is_empty() && !is_marker(s) && !s.starts_with('$') => {
            *s = "[REDACTED:secret_field]".to_string();
            1
        }
        Value::Array(items) => items.iter_mut().map(redact_whole).sum(),
        Value::Object(map) => map.values_mut().map(redact_whole).sum(),
        _ => 0,
    }
}

/// A key naming a secret: `password`, `DB_PASSWORD`, `apiKey`, `client-secret`,
/// `access_token`, `Authorization`; not `max_tokens`, `input_tokens`, `author`, `apiKeySource`.
fn is_secret_key(key: &str) -> bool {
    const ENDINGS: &[&str] = &[
        "password",
        "passwd",
        "passphrase",
        "secret",
        "token",
        "apikey",
        "privatekey",
        "accesskey",
        "secretkey",
        "credential",
        "credentials",
        "authorization",
        "auth",
        "cookie",
    ];
    if key.len() > 64 {
        return false;
    }
    let folded: String =
        key.chars().filter(|c| !matches!(c, '_' | '-' | ' ' | '.')).flat_map(char::to_lowercase).collect();
    ENDINGS.iter().any(|ending| folded.ends_with(ending))
}

/// A typical journal event (one stream-json line of about 1.5 KB: a `user` message carrying a
/// `cargo test` tool result), for benchmarks of [`redact`] and [`redact_json`]. It holds no
/// secret, as most events do not.
pub fn bench_sample() -> String {
    let output = "   Compiling arthur v0.1.0 (/home/dev/arthur)\n    Finished `test` profile [unoptimized + debuginfo] target(s) in 14.82s\n     Running unittests src/lib.rs (target/debug/deps/arthur-3f9c2a8b1d0e4f67)\n\nrunning 12 tests\ntest atlas::classify::tests::floor_forces_noise ... ok\ntest atlas::classify::tests::founder_attachment_overrides_noise ... ok\ntest atlas::mail::tests::forwarded_original_sender ... ok\ntest atlas::mail::tests::message_key_falls_back_to_hash ... ok\ntest atlas::pipeline::tests::replay_is_a_no_op ... ok\ntest atlas::store::tests::one_state_row_per_message ... ok\ntest atlas::scan::tests::infected_attachment_blocks ... ok\ntest atlas::worktree::tests::branch_name_is_sanitised ... ok\ntest config::tests::unknown_keys_are_errors ... ok\ntest web::tests::demo_mode_refuses_writes ... ok\ntest web::tests::security_headers_present ... ok\ntest atlas::report::tests::gate_counts_internal_plans ... ok\n\ntest result: ok. 12 passed; 0 failed; 0 ignored; 0 measured; 0 filtered out; finished in 0.41s\n";
    serde_json::json!({
        "type": "user",
        "message": {
            "role": "user",
            "content": [{
                "tool_use_id": "toolu_01JbXo7ZkQ2mW3sV8nR4tY6u",
                "type": "tool_result",
                "content": output,
                "is_error": false
            }]
        },
        "parent_tool_use_id": null,
        "session_id": "9b2f6c1e-4d3a-4b8e-9f70-2c5d8e1a6b34",
        "uuid": "e4c1a7d2-8b3f-4e69-a05c-71d2f9b8c3e6"
    })
    .to_string()
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;
    use serde_json::json;

    /// Redacts `input`, checks `secret` is gone, `marker` and `kept` are there.
    fn check(input: &str, secret: &str, kind: &str, kept: &[&str]) {
        let (out, n) = redact(input);
        assert!(!out.contains(secret), "{kind}: secret kept in {out:?}");
        assert!(out.contains(&format!("[REDACTED:{kind}]")), "{kind}: no marker in {out:?}");
        assert!(n >= 1, "{kind}: count {n}");
        for k in kept {
            assert!(out.contains(k), "{kind}: lost {k:?} in {out:?}");
        }
    }

    #[test]
    fn database_urls_keep_scheme_user_and_host() {
        check(
            "DATABASE_URL is postgres://atlas:S3cr3t-pw@db.internal:5432/atlas ok",
            "S3cr3t-pw",
            "url_password",
            &["postgres://atlas:", "@db.internal:5432/atlas ok"],
        );
        check("mysql://root:toor42@127.0.0.1/app", "toor42", "url_password", &["mysql://root:", "@127.0.0.1/app"]);
        check(
            "mongodb+srv://app:Mo%40ngoPw@cluster0.x.mongodb.net/?retryWrites=true",
            "Mo%40ngoPw",
            "url_password",
            &["mongodb+srv://app:", "@cluster0.x.mongodb.net"],
        );
        check("redis://:r3dispass@cache:6379/0", "r3dispass", "url_password", &["redis://:", "@cache:6379/0"]);
        check("amqp://guest:p@ss@rabbit/vhost", "p@ss", "url_password", &["amqp://guest:", "@rabbit/vhost"]);
        check(
            "https://x-access-token:ghs_notlongenough@github.com/o/r.git",
            "ghs_notlongenough",
            "url_password",
            &["@github.com/o/r.git"],
        );
    }

    #[test]
    fn env_lines() {
        check("DB_PASSWORD=hunter2\nPORT=5432", "hunter2", "env_secret", &["DB_PASSWORD=", "PORT=5432"]);
        check("export GITHUB_TOKEN=\"abc123def\"", "abc123def", "env_secret", &["export GITHUB_TOKEN="]);
        check("export STRIPE_SECRET='s3cr3t value'", "s3cr3t value", "env_secret", &["export STRIPE_SECRET="]);
        check("PGPASSWORD=pgpw psql -h db", "pgpw", "env_secret", &["psql -h db"]);
        check("MYSQL_PWD=mypw", "mypw", "env_secret", &["MYSQL_PWD="]);
        check("MISTRAL_API_KEY = abcDEF123", "abcDEF123", "env_secret", &["MISTRAL_API_KEY"]);
        check("OPENAI_APIKEY=k1", "k1", "env_secret", &[]);
        check("SSH_PRIVATE_KEY_PATH=/root/.ssh/id", "/root/.ssh/id", "env_secret", &[]);
        check("AWS_CREDENTIALS=creds", "creds", "env_secret", &[]);
        check("BASIC_AUTH=admin:admin", "admin:admin", "env_secret", &[]);
        check(
            "services:\n  db:\n    environment:\n      POSTGRES_PASSWORD: composepw\n",
            "composepw",
            "env_secret",
            &["POSTGRES_PASSWORD: "],
        );
        // Inside a raw JSON line: the value stops at the escaped newline.
        check(r#"{"content":"DB_PASSWORD=hunter2\nNEXT=1"}"#, "hunter2", "env_secret", &[r"\nNEXT=1"]);
        check(r#"{"content":"export API_TOKEN=\"tok-999\"\n"}"#, "tok-999", "env_secret", &[]);
    }

    #[test]
    fn private_keys() {
        let pem = "-----BEGIN RSA PRIVATE KEY-----\nMIIEowIBAAKCAQEAu1SU1LfVLPHCozMxH2Mo\n4lgOEePzNm0tRgeLezV6ffAt0gunVTLw\n-----END RSA PRIVATE KEY-----";
        check(
            &format!("cat id_rsa\n{pem}\ndone"),
            "MIIEowIBAAKCAQEAu1SU1LfVLPHCozMxH2Mo",
            "private_key",
            &["cat id_rsa\n", "\ndone"],
        );
        for label in
            ["OPENSSH PRIVATE KEY", "EC PRIVATE KEY", "PRIVATE KEY", "ENCRYPTED PRIVATE KEY", "PGP PRIVATE KEY BLOCK"]
        {
            let block = format!("-----BEGIN {label}-----\nb3BlbnNzaC1rZXktdjEAAAAA\n-----END {label}-----");
            check(&block, "b3BlbnNzaC1rZXktdjEAAAAA", "private_key", &[]);
        }
        // In a raw JSON line, with escaped newlines; the JSON stays valid.
        let line = json!({"type": "tool_result", "content": format!("key:\n{pem}\n")}).to_string();
        check(&line, "MIIEowIBAAKCAQEAu1SU1LfVLPHCozMxH2Mo", "private_key", &[]);
        assert!(serde_json::from_str::<Value>(&redact(&line).0).is_ok());
        // Cut before its END line: redacted to the end of the base64.
        check(
            "-----BEGIN OPENSSH PRIVATE KEY-----\nb3BlbnNzaC1rZXktdjEAAAAABG5vbmU\n",
            "b3BlbnNzaC1rZXkt",
            "private_key",
            &[],
        );
        // A public key is not a secret.
        let public = "-----BEGIN PUBLIC KEY-----\nMFkwEwYHKoZIzj0CAQYIKoZIzj0DAQcDQgAE\n-----END PUBLIC KEY-----";
        assert_eq!(redact(public).1, 0);
    }

    #[test]
    fn api_keys_and_tokens() {
        let cases = [
            ("anthropic_key", "sk-ant-api03-Xk9fQ2mLr7TzP4vB8nW1yC6hJ3sD5gE0aUoKiMqRtZ-8AbCdEfAA"),
            ("openai_key", "sk-proj-Ab12Cd34Ef56Gh78Ij90Kl12Mn34Op56Qr78St90Uv"),
            ("openai_key", "sk-9fKx2LmQ7rT4zP1vB8nW3yC6hJ5sD0gET3BlbkFJaUoKiMqRtZ"),
            ("stripe_key", "sk_live_51HxYzAbCdEfGh12345678"),
            ("stripe_key", "rk_live_51HxYzAbCdEfGh12345678"),
            ("github_token", "ghp_1234567890abcdefghijABCDEFGHIJ123456"),
            ("github_token", "gho_1234567890abcdefghijABCDEFGHIJ123456"),
            ("github_token", "ghs_1234567890abcdefghijABCDEFGHIJ123456"),
            ("github_token", "ghu_1234567890abcdefghijABCDEFGHIJ123456"),
            ("github_token", "github_pat_11ABCDEFG0123456789_abcdefghijklmnopqrstuvwxyz0123456789ABCDEFGHIJKLMN"),
            ("gitlab_token", "glpat-xY9z8W7v6U5t4S3r2Q1p"),
            ("slack_token", "xoxb-1234567890-0987654321-AbCdEfGhIjKlMnOp"),
            ("slack_token", "xoxp-1234567890-0987654321-AbCdEfGhIjKl"),
            ("aws_access_key", "AKIAIOSFODNN7EXAMPLE"),
            ("google_api_key", "AIzaSyD-1234567890abcdefghijklmnopqrstu"),
            (
                "jwt",
                "eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.dozjgNryP4J3jVmNHl0w5N_XgL0n3I9PlFUP0THsR8U",
            ),
        ];
        for (kind, key) in cases {
            check(&format!("the key is {key}, keep it"), key, kind, &["the key is ", ", keep it"]);
            check(&format!("{{\"text\":\"use {key}\\n\"}}"), key, kind, &[]);
        }
    }

    #[test]
    fn authorization_and_bearer() {
        check(
            "Authorization: Bearer 3f9a8b7c6d5e4f3a2b1c0d9e8f7a6b5c",
            "3f9a8b7c6d5e4f3a2b1c0d9e8f7a6b5c",
            "authorization",
            &["Authorization: Bearer "],
        );
        check(
            "curl -H \"Authorization: Basic YWxhZGRpbjpvcGVuc2VzYW1l\" https://x",
            "YWxhZGRpbjpvcGVuc2VzYW1l",
            "authorization",
            &["https://x"],
        );
        // A Mistral-style 32-character key after Bearer, without the header name.
        check(
            "-H 'Bearer Qk7XzP2mN9vL4rT8wY1cB6hJ3sD5gF0a'",
            "Qk7XzP2mN9vL4rT8wY1cB6hJ3sD5gF0a",
            "bearer_token",
            &["Bearer "],
        );
        check(r#"headers = {"Authorization": "Bearer abc.def-ghi"}"#, "abc.def-ghi", "authorization", &["headers"]);
        // "bearer" in prose is not followed by a token.
        assert_eq!(redact("the bearer of bad news, the bearer token flow").1, 0);
    }

    #[test]
    fn aws_secret_and_json_passwords() {
        check(
            "aws_secret_access_key = wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY",
            "wJalrXUtnFEMI/K7MDENG",
            "aws_secret",
            &["aws_secret_access_key = "],
        );
        check(
            r#"{"user": "admin", "password": "correct horse"}"#,
            "correct horse",
            "secret_field",
            &[r#""user": "admin""#],
        );
        check("password: 'yaml-pw'", "yaml-pw", "secret_field", &["password: '"]);
        check("const apiKey = \"live-abc\";", "live-abc", "secret_field", &["const apiKey = \""]);
        check("conn = connect(host=db, user=app, password=dsnpw)", "dsnpw", "password", &["host=db", ")"]);
        check("psql \"host=db user=app password=libpqpw dbname=x\"", "libpqpw", "password", &["dbname=x"]);
        check("mysql --password=clipw -u root", "clipw", "cli_secret", &["-u root"]);
        check("gh auth login --token ghtoken123", "ghtoken123", "cli_secret", &[]);
    }

    #[test]
    fn secrets_inside_escaped_json_text() {
        // A tool result whose content is JSON text, seen in the raw JSONL line.
        let inner = json!({"db": {"password": "n3st3d-pw", "host": "db"}, "token": "tok_inner_1"}).to_string();
        let line = json!({"type": "tool_result", "content": inner}).to_string();
        assert!(line.contains(r#"\"password\":\"n3st3d-pw\""#));
        let (out, n) = redact(&line);
        assert!(!out.contains("n3st3d-pw") && !out.contains("tok_inner_1"), "{out}");
        assert_eq!(n, 2);
        let back: Value = serde_json::from_str(&out).expect("still JSON");
        let inner_back: Value = serde_json::from_str(back["content"].as_str().unwrap()).expect("inner still JSON");
        assert_eq!(inner_back["db"]["host"], "db");
    }

    #[test]
    fn redact_json_values_and_secret_keys() {
        let mut event = json!({
            "type": "assistant",
            "message": {"content": [{"type": "tool_use", "name": "Bash", "input": {
                "command": "psql postgres://app:pw-in-url@db/app -c 'select 1'",
                "env": {"API_TOKEN": "short", "apiKey": "k", "Authorization": "Bearer zzz", "PATH": "/usr/bin"},
                "credentials": {"user": "u", "pass": ["p1", "p2"]},
            }}]},
            "usage": {"input_tokens": 12, "max_tokens": 4096},
            "apiKeySource": "none",
            "author": "claude",
        });
        let n = redact_json(&mut event);
        let text = event.to_string();
        for secret in ["pw-in-url", "short", "\"k\"", "zzz", "p1", "p2", "\"u\""] {
            assert!(!text.contains(secret), "{secret} kept in {text}");
        }
        assert_eq!(n, 7);
        assert_eq!(event["message"]["content"][0]["input"]["env"]["PATH"], "/usr/bin");
        assert_eq!(event["apiKeySource"], "none");
        assert_eq!(event["author"], "claude");
        assert_eq!(event["usage"]["max_tokens"], 4096);
        // Idempotent.
        let before = event.clone();
        assert_eq!(redact_json(&mut event), 0);
        assert_eq!(event, before);
    }

    #[test]
    fn no_false_positives_on_a_clean_transcript() {
        let clean = r#"I'll look at the failing test first.
$ git log --oneline -3
99bf5ab Atlas launcher: module skeleton, portable-pty and lettre
76c0434 Atlas: each pass visits every pending row once (cursor)
commit 3f9c2a8b1d0e4f67a1b2c3d4e5f60718293a4b5c
session 9b2f6c1e-4d3a-4b8e-9f70-2c5d8e1a6b34
See https://docs.rs/regex/latest/regex/ and http://localhost:3000/api?email=a@b.c
git clone git@github.com:org/repo.git && cd repo
let password_hash = bcrypt(password, DEFAULT_COST)?;
let token = get_token(&client).await?;
API_TOKEN = os.environ["API_TOKEN"]
PGPASSWORD=$DB_PASSWORD psql -h "$DB_HOST"
const MAX_TOKENS: usize = 4096; max_tokens=1024
AUTHOR=Jane PWD=/home/dev OLDPWD=/tmp
"input_tokens": 1532, "output_tokens": 87, "apiKeySource": "none"
if token == "" { return Err(Error::NoToken) }
The disk-usage-report-for-the-whole-cluster ran; scikit-learn is installed.
-----BEGIN PUBLIC KEY----- is fine, ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIG user@host
Passwords must be at least 12 characters; the token expires after 1 hour.
test atlas::redact::tests::env_lines ... ok
"#;
        let (out, n) = redact(clean);
        assert_eq!(n, 0, "redacted: {out}");
        assert!(matches!(out, Cow::Borrowed(_)));
        assert_eq!(redact(&bench_sample()).1, 0);
    }

    #[test]
    fn redaction_is_idempotent_and_markers_stay() {
        let text = "DB_PASSWORD=x1 postgres://u:p2@h/d \"token\": \"t3\" Authorization: Bearer abcdefghijklmnopqrstuvwxyz sk-ant-api03-Xk9fQ2mLr7TzP4vB8nW1yC6hJ3sD5gE0";
        let (once, n) = redact(text);
        assert_eq!(n, 5, "{once}");
        let (twice, m) = redact(&once);
        assert_eq!(m, 0);
        assert_eq!(twice, once);
    }

    #[test]
    fn a_token_hidden_in_a_kept_part_is_still_found() {
        // The user-name part of a URL is kept by the URL rule; the token there is caught by its own.
        let (out, _) = redact("https://ghp_1234567890abcdefghijABCDEFGHIJ123456:x-oauth-basic@github.com/o/r");
        assert!(!out.contains("ghp_1234567890") && !out.contains("x-oauth-basic"), "{out}");
        // A refused candidate (a reference) does not hide what follows it.
        let (out, _) = redact("\"token\": \"$ sk-ant-api03-Xk9fQ2mLr7TzP4vB8nW1yC6hJ3sD5gE0\"");
        assert!(!out.contains("Xk9fQ2mLr7TzP4vB8nW1"), "{out}");
    }

    /// (text inserted, part that must disappear, recognisable alone). A secret recognised by
    /// its context (`DB_PASSWORD=`, a URL, a quoted field) is inserted on its own line, as it
    /// would be printed: glued to arbitrary text, its context can read otherwise.
    const SAMPLES: &[(&str, &str, bool)] = &[
        ("postgres://app:Zq8PwUrl77@db:5432/app", "Zq8PwUrl77", false),
        ("DB_PASSWORD=Zq8PwEnv77", "Zq8PwEnv77", false),
        ("export SECRET_TOKEN=\"Zq8PwExp77\"", "Zq8PwExp77", false),
        (
            "-----BEGIN OPENSSH PRIVATE KEY-----\nZq8PemBody77AAAA\n-----END OPENSSH PRIVATE KEY-----",
            "Zq8PemBody77",
            false,
        ),
        ("Authorization: Bearer Zq8Bearer77yyyyyyyyyyyyyyyyyy", "Zq8Bearer77", false),
        ("aws_secret_access_key=Zq8AwsSecret77/abcdefghijklmnopqrstu", "Zq8AwsSecret77", false),
        ("\"password\": \"Zq8Json77\"", "Zq8Json77", false),
        ("password=Zq8Dsn77", "Zq8Dsn77", false),
        ("sk-ant-api03-Zq8Anthropic77xxxxxxxxxxxxxxxxx", "Zq8Anthropic77", true),
        ("sk-proj-Zq8OpenAi77xxxxxxxxxxxxxxxxxxxxxx", "Zq8OpenAi77", true),
        ("ghp_Zq8GitHub77zzzzzzzzzzzzzzzzzzzzzzzzz", "Zq8GitHub77", true),
        ("glpat-Zq8GitLab77wwwwwwwwwwww", "Zq8GitLab77", true),
        ("xoxb-1234-Zq8Slack77", "Zq8Slack77", true),
        ("AKIAZQ8AWS77ABCDEFGH", "ZQ8AWS77", true),
        ("AIzaZq8Google77aaaaaaaaaaaaaaaaaaaaaaaaaa", "Zq8Google77", true),
        ("sk_live_Zq8Stripe77bbbbbbbb", "Zq8Stripe77", true),
        ("eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiJaUTgifQ.Zq8JwtSig77", "Zq8JwtSig77", true),
    ];

    /// Text made of the pieces the patterns react to, to reach their corners.
    fn tricky_text() -> impl Strategy<Value = String> {
        const PIECES: &[&str] = &[
            " ",
            "\n",
            "\"",
            "'",
            "\\",
            "=",
            ": ",
            "@",
            "/",
            "$",
            "{",
            "}",
            ",",
            "-",
            "_",
            "x",
            "Z9",
            "DB_PASSWORD",
            "password",
            "token",
            "Authorization",
            "Bearer",
            "://",
            "postgres",
            "export ",
            "-----BEGIN RSA PRIVATE KEY-----",
            "-----END RSA PRIVATE KEY-----",
            "sk-",
            "eyJ",
            "\u{1b}[31m",
            "é",
            "[REDACTED:env_secret]",
            "\\\"",
            "\\n",
            "Basic",
            "AKIA",
            "ghp_",
            "aws_secret_access_key",
            "\r",
            "\t",
            "rk_live_0123456789abcdefXY",
            "'",
        ];
        prop::collection::vec(prop::sample::select(PIECES), 0..40).prop_map(|pieces| pieces.concat())
    }

    fn any_text() -> impl Strategy<Value = String> {
        prop_oneof!["\\PC{0,300}", "[ -~\n]{0,300}", tricky_text()]
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(256))]

        #[test]
        fn an_inserted_secret_never_survives(
            text in any_text(),
            at in any::<prop::sample::Index>(),
            which in 0..SAMPLES.len(),
        ) {
            let (secret, core, alone) = SAMPLES[which];
            let cut = text.char_indices().map(|(i, _)| i).chain([text.len()]).nth(at.index(text.chars().count() + 1)).unwrap();
            let input = if alone {
                format!("{} {secret} {}", &text[..cut], &text[cut..])
            } else {
                format!("{}\n{secret}\n{}", &text[..cut], &text[cut..])
            };
            let (out, n) = redact(&input);
            prop_assert!(!out.contains(core), "{} kept in {:?}", core, out);
            prop_assert!(n >= 1);
            let (again, m) = redact(&out);
            prop_assert_eq!(m, 0);
            prop_assert_eq!(again.as_ref(), out.as_ref());
        }

        #[test]
        fn redacting_json_text_keeps_it_json(
            text in any_text(),
            which in 0..SAMPLES.len(),
        ) {
            let (secret, core, _) = SAMPLES[which];
            let event = json!({"type": "user", "content": [{"type": "tool_result", "content": format!("{text}\n{secret}\n{text}")}]});
            let line = event.to_string();
            let (out, _) = redact(&line);
            prop_assert!(!out.contains(core), "{} kept in {:?}", core, out);
            prop_assert!(serde_json::from_str::<Value>(&out).is_ok(), "not JSON: {}", out);
            let mut value = event.clone();
            redact_json(&mut value);
            prop_assert!(!value.to_string().contains(core));
        }

        #[test]
        fn redaction_is_idempotent(text in any_text()) {
            let (once, _) = redact(&text);
            let (twice, n) = redact(&once);
            prop_assert_eq!(n, 0);
            prop_assert_eq!(twice.as_ref(), once.as_ref());
        }
    }
}
