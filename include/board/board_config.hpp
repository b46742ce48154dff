#pragma once
// board.yaml: the board's policy and agent configuration (spec/storage.md, spec/agents.md).
// Loading never throws: a bad file comes back as a ConfigError that names the key, its line
// and what was expected, because a typo must never silently change what the daemon does.

#include <board/agent_dialect.hpp>
#include <board/expected.hpp>
#include <board/next_action.hpp>
#include <board/ticket.hpp>

#include <chrono>
#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <variant>
#include <vector>

namespace board {

/// `daemon:` of board.yaml.
struct DaemonConfig {
    int max_parallel = 2;                       ///< runs in flight across the board, >= 1
    std::chrono::milliseconds poll{10'000};     ///< watch-mode rescan interval, > 0
    std::chrono::milliseconds debounce{2'000};  ///< wait before taking a fresh ticket, >= 0
    std::chrono::milliseconds grace{30'000};    ///< SIGTERM → kill delay for agents, >= 0
    friend bool operator==(const DaemonConfig&, const DaemonConfig&) = default;
};

/// `agents.<phase>.sandbox`: how an agent is confined (include/board/sandbox.hpp).
enum class SandboxMode {
    automatic,  ///< `auto`: Landlock where the kernel offers it, else none (the daemon says so)
    landlock,   ///< always Landlock; the daemon refuses to start without it
    none,       ///< not confined: the agent can do whatever its user can
};

/// `agents.<phase>:` of board.yaml, with `command` and `timeout` already resolved against
/// `agents.default` (a phase that does not set them inherits the default's).
/// `max_output` unless board.yaml says otherwise: 50 MB, far above what any finished phase
/// prints, far below a disk that fills.
inline constexpr std::uint64_t default_max_output = 50ull << 20;
/// The range `max_output` may take: room for a marker line below, a bounded disk above.
inline constexpr std::uint64_t min_max_output = 64ull << 10;
inline constexpr std::uint64_t max_max_output = 64ull << 30;

struct AgentConfig {
    std::vector<std::string> command;  ///< argv, never empty, argv[0] non-empty
    /// How the command is run and read (agent_dialect.hpp): `dialect:` of the phase, else of
    /// `agents.default`, else by the program's name.
    DialectKind dialect = DialectKind::claude;
    std::chrono::milliseconds timeout{std::chrono::minutes{30}};  ///< > 0
    int max_steps = 15;     ///< >= 1; handed to the agent, the board does not count steps
    bool worktree = false;  ///< run in the ticket's git worktree (spec/agents.md)
    /// review: false skips the review-prep agent (Policy::review_agent). Other phases: carried
    /// for the daemon; the spec gives it no meaning there yet.
    bool enabled = true;
    bool resume = false;  ///< resume the agent's last session instead of starting fresh
    SandboxMode sandbox = SandboxMode::automatic;
    /// Bytes of the agent's output kept in its run log; the rest is dropped, with a marker
    /// line in the log and a note on the ticket (the run itself goes on and is judged).
    std::uint64_t max_output = default_max_output;
    /// Questions kept from one run (the rest are named in a note, not asked); >= 1.
    int max_questions = 5;
    friend bool operator==(const AgentConfig&, const AgentConfig&) = default;
};

/// `notify:` of board.yaml: a command run whenever a ticket starts awaiting a person or an
/// agent asks a question (the daemon's Notifier, src/orchestrator/notifier.hpp). Like an
/// agent's, the command is an argv list, never a shell string.
struct NotifyConfig {
    std::vector<std::string> command;           ///< empty: no notifications
    std::chrono::milliseconds timeout{10'000};  ///< killed after this long, > 0
    int max_parallel = 4;                       ///< commands in flight, >= 1; more are dropped
    friend bool operator==(const NotifyConfig&, const NotifyConfig&) = default;
};

/// `[gh, pr, create, --head, {branch}, --base, {base}, --title, {title}, --body, {body}]`.
std::vector<std::string> default_pr_command();

/// `ship:` of board.yaml: what becomes of a ticket's branch (`board/<ID>`, made when its
/// implementing agent runs in a worktree) once a person approves the ticket done. The daemon
/// does it and records `shipped`, or `ship-failed` (the ticket goes back to a person).
struct ShipConfig {
    /// merge: merged into `base` in the board's checkout; pr: pushed to `remote` and offered
    /// with `pr_command`; none: left as it is.
    ShipMethod policy = ShipMethod::merge;
    std::string base;               ///< empty: the branch the board's checkout is on
    std::string remote = "origin";  ///< pr: where the branch is pushed
    /// pr: an argv list; `{branch}`, `{base}`, `{title}`, `{id}` and `{body}` are replaced in
    /// each element. What it prints last that looks like an address is recorded.
    std::vector<std::string> pr_command = default_pr_command();
    /// Remove the ticket's worktree once shipped, and its branch once merged.
    bool cleanup = true;
    friend bool operator==(const ShipConfig&, const ShipConfig&) = default;
};

/// `[claude]`: Claude Code; its dialect adds print mode, stream-json output (which carries
/// the run's cost, tokens and session id), the permission mode and the writable folders.
std::vector<std::string> default_agent_command();

/// The documented defaults of `agents.<phase>` (max_steps 15/15/30/10, implementing in a
/// worktree), with the default command and timeout. Any other status gets max_steps 15.
AgentConfig default_agent_config(Status phase);

/// Everything board.yaml says. Default-constructed, it holds the documented defaults.
struct BoardConfig {
    std::string prefix = "PROJ";  ///< matches ^[A-Z][A-Z0-9]{0,15}$
    /// auto, wip, gates, budget (including retry_backoff and retry_backoff_max) and
    /// agents.review.enabled (as `review_agent`).
    Policy policy;
    DaemonConfig daemon;
    /// `agents.default`: what a phase without its own command/timeout runs.
    std::vector<std::string> default_command = default_agent_command();
    std::optional<DialectKind> default_dialect;  ///< `agents.default.dialect`; unset: by name
    SandboxMode default_sandbox = SandboxMode::automatic;  ///< `agents.default.sandbox`
    std::chrono::milliseconds default_timeout{std::chrono::minutes{30}};
    std::uint64_t default_max_output = board::default_max_output;  ///< `agents.default.max_output`
    AgentConfig research = default_agent_config(Status::research);
    AgentConfig planning = default_agent_config(Status::planning);
    AgentConfig implementing = default_agent_config(Status::implementing);
    AgentConfig review = default_agent_config(Status::review);
    NotifyConfig notify;
    ShipConfig ship;

    /// The agent of an agent phase (is_agent_phase); nullptr for any other status.
    const AgentConfig* agent(Status phase) const;

    friend bool operator==(const BoardConfig&, const BoardConfig&) = default;
};

/// Why board.yaml was refused.
struct ConfigError {
    int line = 0;    ///< 1-based; 0 when the file as a whole is at fault (unreadable)
    int column = 0;  ///< 1-based; 0 when unknown
    /// One sentence for a person, starting with the line and naming the key path, e.g.
    /// `line 7: gates.reserch: unknown key (did you mean "research"?); expected one of
    /// research, planning`, `line 3: daemon.poll: expected a duration like 500ms, 10s, 5m
    /// or 1h, got "10 seconds"`.
    std::string message;
    friend bool operator==(const ConfigError&, const ConfigError&) = default;
};

/// A loaded config, or why not.
using ConfigResult = Expected<BoardConfig, ConfigError>;

/// Parses the text of a board.yaml. An empty document (or only comments) is all defaults.
/// Errors: YAML syntax (with its line), more than one document, a top level that is not a
/// mapping, unknown or duplicate keys, wrong types (a quoted "3" is a string, not a number),
/// negative or zero counts, unknown gates, a command given as a string or empty, bad
/// durations, a prefix not matching ^[A-Z][A-Z0-9]{0,15}$.
ConfigResult parse_board_config(std::string_view yaml_text);

/// Reads and parses `file`. A missing or unreadable file is an error with line 0; callers
/// that treat a missing board.yaml as "all defaults" check for it first.
ConfigResult load_board_config(const std::filesystem::path& file);

/// The fully commented board.yaml that `board init` writes: every key with its default,
/// Claude Code as the agent, Codex as a commented alternative. Loading it yields
/// BoardConfig{} with `prefix` replaced. Precondition: is_valid_prefix(prefix).
std::string default_board_yaml(std::string_view prefix = "PROJ");

/// True if `prefix` matches ^[A-Z][A-Z0-9]{0,15}$ (the id part before `-N`).
bool is_valid_prefix(std::string_view prefix);

/// The longest duration any setting takes: 30 days, longer than any run, poll or wait a board
/// needs, and far inside every clock's range (a timer set 3,000,000 h ahead overflows the
/// steady clock and fires at once, or never).
inline constexpr std::chrono::milliseconds max_duration = std::chrono::hours{720};

/// Parses `500ms`, `10s`, `5m`, `1h`: digits then exactly one unit, no sign, no spaces, at most
/// max_duration. nullopt for anything else.
std::optional<std::chrono::milliseconds> parse_duration(std::string_view text);

/// The shortest exact spelling parse_duration reads back: 1800000ms → `30m`.
std::string format_duration(std::chrono::milliseconds d);

/// Parses a size: digits then `B`, `KB`, `MB` or `GB` (binary: 1 KB = 1024 bytes), no sign, no
/// spaces. nullopt for anything else or above 2^63 bytes.
std::optional<std::uint64_t> parse_size(std::string_view text);

/// The shortest exact spelling parse_size reads back: 52428800 → `50MB`.
std::string format_size(std::uint64_t bytes);

}  // namespace board
