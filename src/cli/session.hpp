#pragma once
// What every `board` command shares: the global options, finding the board, who acts, and
// turning the application layer's results into output and an exit code (spec/cli.md: 0 done,
// 1 refused / unknown id / nothing next, 2 usage, 3 storage).

#include <board/app.hpp>

#include <filesystem>
#include <optional>
#include <string>
#include <string_view>
#include <variant>

namespace board::cli {

enum class Exit { ok = 0, refused = 1, usage = 2, storage = 3 };

/// `--board`, `--as`, `--json`: accepted before the command and after it.
struct GlobalOptions {
    std::string board_dir;
    std::string as;
    bool json = false;
};

/// One line on stderr, `board: ` first, printable (a newline in someone's input cannot make
/// it two lines).
void say(std::string_view line);
void warn(std::string_view warning);
/// says `command: message` and returns `code`.
int fail(Exit code, std::string_view command, std::string_view message);

/// Prints the refusal's warnings and message (after `command: `, when given); returns its
/// exit code.
int report(const app::Refusal& refusal, std::string_view command = {});
void warn_all(const std::vector<std::string>& warnings);

/// `--board`, else `$BOARD_DIR`, else the nearest ancestor with a board.yaml.
std::optional<std::filesystem::path> find_board(const GlobalOptions& options);

/// Who a command acts as: `agent:<phase>` inside an agent run (`BOARD_RUN` set, phase from
/// `BOARD_PHASE`), else `human:<--as or $USER>`.
Actor invoking_actor(const std::string& as_name);

/// A command at work on a board.
class Session {
public:
    /// The board the options name, or the exit code of why there is none. A command that
    /// `writes` also needs an actor that can sign an event.
    static std::variant<Session, int> open(const GlobalOptions& options,
                                           std::string_view command,
                                           bool writes);

    app::Board& board() { return *board_; }

    const std::filesystem::path& root() const { return board_->root(); }

    const Actor& by() const { return by_; }

    bool colour() const { return colour_; }

    /// A write's outcome: the ticket (`--json`) or `ID: state`, else the refusal.
    int print(const app::Result<app::Written>& written) const;

private:
    Session() = default;
    std::unique_ptr<app::Board> board_;
    Actor by_;
    bool json_ = false;
    bool colour_ = false;
};

}  // namespace board::cli
