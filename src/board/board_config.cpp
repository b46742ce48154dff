// board.yaml → BoardConfig: the loader. The walk is strict on purpose: every map lists the keys
// it knows, and anything else is an error with its line, so a typo in a gate or a budget is
// caught when the file is read rather than discovered when an agent runs unsupervised. The
// defaults it starts from, and the commented board.yaml `board init` writes, are in
// board_config_defaults.cpp.

#include "support/utf8.hpp"

#include <board/board_config.hpp>

#include <fmt/format.h>
#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <charconv>
#include <climits>
#include <cmath>
#include <cstddef>
#include <fstream>
#include <initializer_list>
#include <set>
#include <sstream>
#include <system_error>

namespace board {

namespace {

using std::chrono::milliseconds;

/// Thrown inside this file only; parse_board_config turns it into its return value.
struct ConfigFailure {
    ConfigError error;
};

std::string_view kind_name(const YAML::Node& node) {
    switch (node.Type()) {
        case YAML::NodeType::Null:
            return "nothing";
        case YAML::NodeType::Sequence:
            return "a list";
        case YAML::NodeType::Map:
            return "a mapping";
        case YAML::NodeType::Scalar:
        case YAML::NodeType::Undefined:
            break;
    }
    return "a scalar";
}

/// What a value was, for "got ..." in messages: the text itself for scalars.
std::string describe(const YAML::Node& node) {
    if (node.IsScalar()) return fmt::format("\"{}\"", node.Scalar());
    return std::string{kind_name(node)};
}

/// yaml-cpp marks are 0-based; a null node built for `key:` with no value carries the mark
/// of whatever follows, so callers pass the key's mark for those.
[[noreturn]] void fail(const YAML::Mark& mark, std::string_view path, std::string_view what) {
    const int line = mark.is_null() ? 0 : mark.line + 1;
    const int column = mark.is_null() ? 0 : mark.column + 1;
    throw ConfigFailure{
        ConfigError{line, column, fmt::format("line {}: {}: {}", line, path, what)}};
}

/// A value together with where to blame it: the key's mark when the value has none of its own.
struct Field {
    std::string path;
    YAML::Node value;
    YAML::Mark mark;
};

Field field_of(std::string_view parent, const YAML::Node& key, const YAML::Node& value) {
    std::string path = parent.empty() ? key.Scalar() : fmt::format("{}.{}", parent, key.Scalar());
    const YAML::Mark mark = value.IsNull() ? key.Mark() : value.Mark();
    return Field{std::move(path), value, mark};
}

std::size_t edit_distance(std::string_view a, std::string_view b) {
    std::vector<std::size_t> row(b.size() + 1);
    for (std::size_t j = 0; j <= b.size(); ++j) row[j] = j;
    for (std::size_t i = 1; i <= a.size(); ++i) {
        std::size_t diagonal = row[0];
        row[0] = i;
        for (std::size_t j = 1; j <= b.size(); ++j) {
            const std::size_t above = row[j];
            row[j] = std::min({row[j] + 1, row[j - 1] + 1, diagonal + (a[i - 1] != b[j - 1])});
            diagonal = above;
        }
    }
    return row[b.size()];
}

std::string unknown_key_message(std::string_view key,
                                std::initializer_list<std::string_view> known) {
    std::string message = "unknown key";
    std::string_view best;
    std::size_t best_distance = 3;  // suggest only close misspellings
    for (const auto candidate : known) {
        const std::size_t d = edit_distance(key, candidate);
        if (d < best_distance) {
            best = candidate;
            best_distance = d;
        }
    }
    if (!best.empty()) message += fmt::format(" (did you mean \"{}\"?)", best);
    message += "; expected one of ";
    bool first = true;
    for (const auto candidate : known) {
        if (!first) message += ", ";
        message += candidate;
        first = false;
    }
    return message;
}

/// Calls `on(key, field)` for each entry of the mapping `f`; unknown, duplicate and
/// non-scalar keys fail. A null value (`auto:` with nothing under it) is an empty mapping,
/// so commenting out every line of a section keeps its defaults.
template <class F>
void for_each_key(const Field& f, std::initializer_list<std::string_view> known, F on) {
    if (f.value.IsNull()) return;
    if (!f.value.IsMap()) {
        std::string keys;
        for (const auto k : known) keys += keys.empty() ? std::string{k} : fmt::format(", {}", k);
        fail(f.mark,
             f.path,
             fmt::format("expected a mapping of {}, got {}", keys, describe(f.value)));
    }
    std::set<std::string, std::less<>> seen;
    for (auto it = f.value.begin(); it != f.value.end(); ++it) {
        // By value: the iterator's operator-> yields a temporary pair, so a reference into it
        // dangles at the end of the statement.
        const YAML::Node key = it->first;
        const YAML::Node value = it->second;
        if (!key.IsScalar()) {
            fail(key.Mark(), f.path, fmt::format("expected a key name, got {}", kind_name(key)));
        }
        const std::string& name = key.Scalar();
        const std::string path = f.path.empty() ? name : fmt::format("{}.{}", f.path, name);
        if (std::find(known.begin(), known.end(), name) == known.end()) {
            fail(key.Mark(), path, unknown_key_message(name, known));
        }
        if (!seen.insert(name).second) fail(key.Mark(), path, "duplicate key");
        on(std::string_view{name}, field_of(f.path, key, value));
    }
}

/// The text of a scalar, or a failure naming what was expected.
const std::string& scalar(const Field& f, std::string_view expected) {
    if (!f.value.IsScalar()) {
        fail(f.mark, f.path, fmt::format("expected {}, got {}", expected, describe(f.value)));
    }
    return f.value.Scalar();
}

/// Numbers and booleans must be plain scalars: `"3"` is a string in YAML, and accepting it
/// would make the file mean different things to different readers.
const std::string& plain_scalar(const Field& f, std::string_view expected) {
    const std::string& text = scalar(f, expected);
    if (f.value.Tag() != "?") {
        fail(f.mark, f.path, fmt::format("expected {}, got the string \"{}\"", expected, text));
    }
    return text;
}

bool read_bool(const Field& f) {
    const std::string& text = plain_scalar(f, "true or false");
    // The YAML 1.2 core schema spellings only: `yes`/`on` are YAML 1.1 surprises.
    if (text == "true" || text == "True" || text == "TRUE") return true;
    if (text == "false" || text == "False" || text == "FALSE") return false;
    fail(f.mark, f.path, fmt::format("expected true or false, got \"{}\"", text));
}

int read_int(const Field& f, int min) {
    const std::string expected = fmt::format("a whole number >= {}", min);
    const std::string& text = plain_scalar(f, expected);
    long long value = 0;
    const char* const end = text.data() + text.size();
    const auto [ptr, ec] = std::from_chars(text.data(), end, value);
    if (ec != std::errc{} || ptr != end || value < min || value > INT_MAX) {
        fail(f.mark, f.path, fmt::format("expected {}, got \"{}\"", expected, text));
    }
    return static_cast<int>(value);
}

double read_money(const Field& f) {
    constexpr std::string_view expected = "an amount in USD >= 0 (0 = unlimited)";
    const std::string& text = plain_scalar(f, expected);
    double value = 0;
    const char* const end = text.data() + text.size();
    const auto [ptr, ec] = std::from_chars(text.data(), end, value);
    if (ec != std::errc{} || ptr != end || !std::isfinite(value) || value < 0) {
        fail(f.mark, f.path, fmt::format("expected {}, got \"{}\"", expected, text));
    }
    return value;
}

milliseconds read_duration(const Field& f, bool allow_zero) {
    const std::string_view expected =
        allow_zero ? "a duration like 500ms, 10s, 5m or 1h, at most 720h"
                   : "a positive duration like 500ms, 10s, 5m or 1h, at most 720h";
    const std::string& text = scalar(f, expected);
    const auto d = parse_duration(text);
    if (!d || (!allow_zero && d->count() == 0)) {
        fail(f.mark, f.path, fmt::format("expected {}, got \"{}\"", expected, text));
    }
    return *d;
}

std::uint64_t read_size(const Field& f) {
    const std::string expected = fmt::format("a size like 512KB, 50MB or 1GB, from {} to {}",
                                             format_size(min_max_output),
                                             format_size(max_max_output));
    const std::string& text = scalar(f, expected);
    const auto bytes = parse_size(text);
    if (!bytes || *bytes < min_max_output || *bytes > max_max_output) {
        fail(f.mark, f.path, fmt::format("expected {}, got \"{}\"", expected, text));
    }
    return *bytes;
}

/// One of an enum's wire names (`parse<E>`); `expected` lists them for the message.
template <class E>
E read_named(const Field& f, std::string_view expected) {
    const std::string& text = scalar(f, expected);
    const auto value = parse<E>(text);
    if (!value) fail(f.mark, f.path, fmt::format("expected {}, got \"{}\"", expected, text));
    return *value;
}

/// A branch or remote name as git takes it on a command line: never an option (`-x`), no
/// blanks or control characters. `allow_empty`: empty means "the checkout's branch".
std::string read_branch(const Field& f, bool allow_empty) {
    constexpr std::string_view expected = "a git branch or remote name";
    const std::string& text = scalar(f, expected);
    const bool bad = (text.empty() && !allow_empty) || (!text.empty() && text.front() == '-') ||
                     std::any_of(text.begin(), text.end(), [](char c) {
                         return static_cast<unsigned char>(c) <= ' ' || c == '\x7f' || c == '~' ||
                                c == '^' || c == ':' || c == '\\';
                     });
    if (bad) fail(f.mark, f.path, fmt::format("expected {}, got \"{}\"", expected, text));
    return text;
}

std::string read_prefix(const Field& f) {
    constexpr std::string_view expected =
        "an uppercase letter then up to 15 uppercase letters or digits (^[A-Z][A-Z0-9]{0,15}$)";
    const std::string& text = scalar(f, expected);
    if (!is_valid_prefix(text)) {
        fail(f.mark, f.path, fmt::format("expected {}, got \"{}\"", expected, text));
    }
    return text;
}

std::vector<std::string> read_command(const Field& f) {
    if (f.value.IsScalar()) {
        // The argv is never handed to a shell, so a string has no safe meaning: splitting it
        // on spaces would break quoting, and running it whole would look up one long name.
        fail(f.mark,
             f.path,
             fmt::format("expected an argv list like [claude, -p], got the string \"{}\" "
                         "(commands never run through a shell)",
                         f.value.Scalar()));
    }
    if (!f.value.IsSequence()) {
        fail(f.mark,
             f.path,
             fmt::format("expected an argv list like [claude, -p], got {}", describe(f.value)));
    }
    if (f.value.size() == 0) {
        fail(f.mark, f.path, "expected an argv list like [claude, -p], got an empty list");
    }
    std::vector<std::string> argv;
    for (std::size_t i = 0; i < f.value.size(); ++i) {
        const YAML::Node item = f.value[i];
        const Field element{fmt::format("{}[{}]", f.path, i), item, item.Mark()};
        argv.push_back(scalar(element, "a string"));
    }
    if (argv.front().empty()) fail(f.mark, f.path, "expected a program name first, got \"\"");
    return argv;
}

/// A list of people's names (`[alice, bob]`): each one word, as `--as` takes it.
std::vector<std::string> read_names(const Field& f) {
    if (!f.value.IsSequence())
        fail(f.mark,
             f.path,
             fmt::format("expected a list of names like [alice, bob], got {}", describe(f.value)));
    std::vector<std::string> names;
    for (std::size_t i = 0; i < f.value.size(); ++i) {
        const YAML::Node item = f.value[i];
        const Field element{fmt::format("{}[{}]", f.path, i), item, item.Mark()};
        const std::string& name = scalar(element, "a name");
        if (!is_valid_actor(Actor{ActorKind::human, name}))
            fail(element.mark,
                 element.path,
                 fmt::format("expected a name of one word, got \"{}\"", name));
        names.push_back(name);
    }
    return names;
}

/// Calls `on(kind, field)` for each awaiting kind `f` names (`handoffs:`, `reviewers:`).
template <class F>
void for_each_awaiting(const Field& f, F on) {
    for_each_key(f,
                 {"work", "approval", "input", "review", "content", "escalation", "checkpoint"},
                 [&](std::string_view kind, const Field& v) { on(*parse<Awaiting>(kind), v); });
}

void read_handoffs(const Field& f, Policy& policy) {
    for_each_awaiting(f, [&](Awaiting kind, const Field& v) {
        HandoffPolicy& p = policy.handoffs[static_cast<std::size_t>(kind)];
        for_each_key(v,
                     {"remind_after", "escalate_after", "escalate_to"},
                     [&](std::string_view k, const Field& x) {
                         if (k == "remind_after")
                             p.remind_after_ms = read_duration(x, false).count();
                         if (k == "escalate_after")
                             p.escalate_after_ms = read_duration(x, false).count();
                         if (k == "escalate_to") p.escalate_to = read_names(x);
                     });
    });
}

void read_reviewers(const Field& f, Policy& policy) {
    for_each_awaiting(f, [&](Awaiting kind, const Field& v) {
        policy.handoffs[static_cast<std::size_t>(kind)].reviewers = read_names(v);
    });
}

/// `agents.<phase>` as written: command and timeout stay unset until `agents.default` is
/// known, because the file may name the phases before the default.
struct PhaseEntry {
    AgentConfig agent;
    std::optional<std::vector<std::string>> command;
    std::optional<milliseconds> timeout;
    std::optional<std::uint64_t> max_output;
    std::optional<DialectKind> dialect;
    std::optional<SandboxMode> sandbox;
};

SandboxMode read_sandbox(const Field& f) {
    constexpr std::string_view expected = "auto, landlock or none";
    const std::string& text = scalar(f, expected);
    if (text == "auto") return SandboxMode::automatic;
    if (text == "landlock") return SandboxMode::landlock;
    if (text == "none") return SandboxMode::none;
    fail(f.mark, f.path, fmt::format("expected {}, got \"{}\"", expected, text));
}

/// `auto` (by the program's name, as when absent) or a dialect's name.
std::optional<DialectKind> read_dialect(const Field& f) {
    constexpr std::string_view expected = "auto, claude, codex, gemini or generic";
    const std::string& text = scalar(f, expected);
    if (text == "auto") return std::nullopt;
    const auto kind = parse_dialect(text);
    if (!kind) fail(f.mark, f.path, fmt::format("expected {}, got \"{}\"", expected, text));
    return kind;
}

void read_phase(const Field& f, PhaseEntry& entry) {
    for_each_key(f,
                 {"max_steps",
                  "worktree",
                  "enabled",
                  "command",
                  "timeout",
                  "max_output",
                  "resume",
                  "dialect",
                  "sandbox",
                  "max_questions"},
                 [&](std::string_view key, const Field& v) {
                     if (key == "max_questions") entry.agent.max_questions = read_int(v, 1);
                     if (key == "dialect") entry.dialect = read_dialect(v);
                     if (key == "sandbox") entry.sandbox = read_sandbox(v);
                     if (key == "max_steps") entry.agent.max_steps = read_int(v, 1);
                     if (key == "worktree") entry.agent.worktree = read_bool(v);
                     if (key == "enabled") entry.agent.enabled = read_bool(v);
                     if (key == "resume") entry.agent.resume = read_bool(v);
                     if (key == "command") entry.command = read_command(v);
                     if (key == "timeout") entry.timeout = read_duration(v, false);
                     if (key == "max_output") entry.max_output = read_size(v);
                 });
}

void read_default_agent(const Field& f, BoardConfig& config) {
    for_each_key(f,
                 {"command", "timeout", "max_output", "dialect", "sandbox"},
                 [&](std::string_view key, const Field& v) {
                     if (key == "command") config.default_command = read_command(v);
                     if (key == "dialect") config.default_dialect = read_dialect(v);
                     if (key == "sandbox") config.default_sandbox = read_sandbox(v);
                     if (key == "timeout") config.default_timeout = read_duration(v, false);
                     if (key == "max_output") config.default_max_output = read_size(v);
                 });
}

void read_agents(const Field& f, BoardConfig& config) {
    PhaseEntry research{default_agent_config(Status::research), {}, {}, {}, {}, {}};
    PhaseEntry planning{default_agent_config(Status::planning), {}, {}, {}, {}, {}};
    PhaseEntry implementing{default_agent_config(Status::implementing), {}, {}, {}, {}, {}};
    PhaseEntry review{default_agent_config(Status::review), {}, {}, {}, {}, {}};
    for_each_key(f,
                 {"default", "research", "planning", "implementing", "review"},
                 [&](std::string_view key, const Field& v) {
                     if (key == "default") read_default_agent(v, config);
                     if (key == "research") read_phase(v, research);
                     if (key == "planning") read_phase(v, planning);
                     if (key == "implementing") read_phase(v, implementing);
                     if (key == "review") read_phase(v, review);
                 });
    const auto resolve = [&](PhaseEntry& entry) {
        entry.agent.command = entry.command.value_or(config.default_command);
        entry.agent.timeout = entry.timeout.value_or(config.default_timeout);
        entry.agent.max_output = entry.max_output.value_or(config.default_max_output);
        // A phase with its own command and no dialect is read by that command's name, not
        // by the default's dialect (which may be for another program).
        const auto inherited = entry.command ? std::nullopt : config.default_dialect;
        entry.agent.dialect =
            entry.dialect.value_or(inherited.value_or(dialect_of_command(entry.agent.command)));
        entry.agent.sandbox = entry.sandbox.value_or(config.default_sandbox);
        return entry.agent;
    };
    config.research = resolve(research);
    config.planning = resolve(planning);
    config.implementing = resolve(implementing);
    config.review = resolve(review);
    config.policy.review_agent = config.review.enabled;
}

void read_top(const Field& top, BoardConfig& config) {
    Policy& policy = config.policy;
    const auto wip = [&](Status s) -> int& { return policy.wip[static_cast<std::size_t>(s)]; };
    for_each_key(
        top,
        {"prefix",
         "auto",
         "wip",
         "gates",
         "budget",
         "daemon",
         "agents",
         "notify",
         "ship",
         "handoffs",
         "reviewers"},
        [&](std::string_view key, const Field& v) {
            if (key == "prefix") config.prefix = read_prefix(v);
            if (key == "handoffs") read_handoffs(v, policy);
            if (key == "reviewers") read_reviewers(v, policy);
            if (key == "auto") {
                for_each_key(v, {"research", "planning"}, [&](std::string_view k, const Field& x) {
                    (k == "research" ? policy.auto_research : policy.auto_planning) = read_bool(x);
                });
            }
            if (key == "wip") {
                for_each_key(v,
                             {"research", "planning", "implementing"},
                             [&](std::string_view k, const Field& x) {
                                 wip(*parse<Status>(k)) = read_int(x, 0);
                             });
            }
            if (key == "gates") {
                for_each_key(v, {"research", "planning"}, [&](std::string_view k, const Field& x) {
                    (k == "research" ? policy.research_gate : policy.planning_gate) =
                        read_named<Gate>(x, "none, checkpoint or approval");
                });
            }
            if (key == "budget") {
                for_each_key(v,
                             {"max_iterations",
                              "max_attempts",
                              "max_cost_usd",
                              "retry_backoff",
                              "retry_backoff_max"},
                             [&](std::string_view k, const Field& x) {
                                 if (k == "retry_backoff")
                                     policy.retry_backoff_ms = read_duration(x, true).count();
                                 if (k == "retry_backoff_max")
                                     policy.retry_backoff_max_ms = read_duration(x, true).count();
                                 if (k == "max_iterations") policy.max_iterations = read_int(x, 1);
                                 if (k == "max_attempts") policy.max_attempts = read_int(x, 1);
                                 if (k == "max_cost_usd") policy.max_cost_usd = read_money(x);
                             });
            }
            if (key == "daemon") {
                for_each_key(v,
                             {"max_parallel", "poll", "debounce", "grace"},
                             [&](std::string_view k, const Field& x) {
                                 DaemonConfig& d = config.daemon;
                                 if (k == "max_parallel") d.max_parallel = read_int(x, 1);
                                 if (k == "poll") d.poll = read_duration(x, false);
                                 if (k == "debounce") d.debounce = read_duration(x, true);
                                 if (k == "grace") d.grace = read_duration(x, true);
                             });
            }
            if (key == "agents") read_agents(v, config);
            if (key == "ship") {
                for_each_key(v,
                             {"policy", "base", "remote", "pr_command", "cleanup"},
                             [&](std::string_view k, const Field& x) {
                                 ShipConfig& ship = config.ship;
                                 if (k == "policy")
                                     ship.policy = read_named<ShipMethod>(x, "merge, pr or none");
                                 if (k == "base") ship.base = read_branch(x, true);
                                 if (k == "remote") ship.remote = read_branch(x, false);
                                 if (k == "pr_command") ship.pr_command = read_command(x);
                                 if (k == "cleanup") ship.cleanup = read_bool(x);
                             });
            }
            if (key == "notify") {
                for_each_key(v,
                             {"command", "timeout", "max_parallel"},
                             [&](std::string_view k, const Field& x) {
                                 NotifyConfig& n = config.notify;
                                 if (k == "command") n.command = read_command(x);
                                 if (k == "timeout") n.timeout = read_duration(x, false);
                                 if (k == "max_parallel") n.max_parallel = read_int(x, 1);
                             });
            }
        });
}

}  // namespace

ConfigResult parse_board_config(std::string_view yaml_text) {
    // UTF-8 only: yaml-cpp would take a UTF-16 or UTF-32 byte-order mark (FF FE...) as its
    // encoding and read the rest as nothing, and the board would run on the defaults.
    if (const std::size_t valid = valid_utf8_prefix(yaml_text); valid < yaml_text.size()) {
        const std::string_view before = yaml_text.substr(0, valid);
        const auto line = static_cast<int>(std::count(before.begin(), before.end(), '\n')) + 1;
        const auto column = static_cast<int>(valid - (before.rfind('\n') + 1)) + 1;
        return ConfigError{line,
                           column,
                           fmt::format("line {}: not UTF-8 text (byte 0x{:02X} at column {}): "
                                       "save board.yaml as UTF-8",
                                       line,
                                       static_cast<unsigned char>(yaml_text[valid]),
                                       column)};
    }
    try {
        const std::vector<YAML::Node> documents = YAML::LoadAll(std::string{yaml_text});
        BoardConfig config;
        if (documents.empty()) return config;
        if (documents.size() > 1) {
            fail(documents[1].Mark(), "(document)", "expected one YAML document, got several");
        }
        const YAML::Node& root = documents.front();
        if (!root.IsNull() && !root.IsMap()) {
            fail(root.Mark(),
                 "(top level)",
                 fmt::format("expected a mapping of keys like prefix, auto, wip, got {}",
                             describe(root)));
        }
        read_top(Field{"", root, root.Mark()}, config);
        return config;
    } catch (const ConfigFailure& failure) {
        return failure.error;
    } catch (const YAML::Exception& e) {
        const int line = e.mark.is_null() ? 0 : e.mark.line + 1;
        const int column = e.mark.is_null() ? 0 : e.mark.column + 1;
        return ConfigError{line, column, fmt::format("line {}: invalid YAML: {}", line, e.msg)};
    } catch (const std::exception& e) {
        return ConfigError{0, 0, fmt::format("cannot read board.yaml: {}", e.what())};
    }
}

ConfigResult load_board_config(const std::filesystem::path& file) {
    try {
        std::ifstream in{file, std::ios::binary};
        if (!in) return ConfigError{0, 0, fmt::format("cannot open {}", file.string())};
        std::ostringstream text;
        text << in.rdbuf();
        if (in.bad()) return ConfigError{0, 0, fmt::format("cannot read {}", file.string())};
        return parse_board_config(text.str());
    } catch (const std::exception& e) {
        return ConfigError{0, 0, fmt::format("cannot read {}: {}", file.string(), e.what())};
    }
}

}  // namespace board
