#pragma once
// The behaviour script of board_fake_agent (the daemon's test double): one line per run, each
// line a list of actions. Parsing is pure so fake_agent_test.cpp checks it without processes;
// fake_agent.cpp carries the actions out. The format is documented at the top of
// fake_agent.cpp.

#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

namespace board::fake_agent {

struct Action {
    enum class Kind {
        artifact,     ///< text: complete | in-progress | none
        signal,       ///< text: the name; context: after the first `:`, trimmed
        question,     ///< text: printed inside <question>...</question>, as given
        exit,         ///< number: the exit code (0-255)
        sleep,        ///< number: milliseconds
        hang,         ///< text: "" or "ignore-term"
        grandchild,   ///< text: "" (inherits stdout/stderr), "closed" (stdio on /dev/null) or
                      ///< "setsid" (closed, and in a session of its own)
        flood,        ///< number: MiB of junk lines on stdout
        no_stdin,     ///< never read stdin
        cost,         ///< text: the decimal total_cost_usd
        session,      ///< text: the session id
        garbage,      ///< invalid UTF-8 and binary bytes on stdout
        stderr_text,  ///< text: one line on stderr
        stdout_text,  ///< text: one line on stdout
        commit,       ///< text: a file (relative to the working directory) written and committed
        wait,         ///< text: a file name in fake-agent/ to wait for (a test releases the run)
    };
    Kind kind = Kind::artifact;
    std::string text;
    std::string context;
    long long number = 0;

    friend bool operator==(const Action&, const Action&) = default;
};

/// One parsed line: the actions in order, or an error saying which token is wrong and why.
struct ParsedLine {
    std::vector<Action> actions;
    std::string error;
};

/// Splits a line into `key` / `key=value` tokens: blanks separate tokens; a value may be
/// double-quoted (`\"`, `\\`, `\n`, `\t` escapes) or single-quoted (literal), and then may
/// hold blanks. Returns the tokens with their quotes resolved, or sets `error`.
std::vector<std::string> tokenize(std::string_view line, std::string& error);

/// Parses one script line (see fake_agent.cpp for the actions).
ParsedLine parse_line(std::string_view line);

/// The lines of a script file. A final newline does not start one more (empty) line.
std::vector<std::string> split_script(std::string_view text);

/// The 0-based index of the line used by the `run`-th run (1-based) of a script with
/// `line_count` lines (at least one): line n for run n, the last line once they run out.
std::size_t line_for_run(std::size_t line_count, std::size_t run);

/// True when `actions` say `no-stdin`.
bool skips_stdin(const std::vector<Action>& actions);

/// True when `actions` name the artifact (`artifact=...`); otherwise a complete one is written
/// before the first action.
bool names_artifact(const std::vector<Action>& actions);

}  // namespace board::fake_agent
