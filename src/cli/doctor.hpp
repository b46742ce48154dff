#pragma once
// `board doctor`: can this board's agents run here? Each configured agent program is found and
// asked its version, its credentials are looked for where its CLI looks, git is checked where
// implementing needs a worktree, and the board's folders and the sandbox are checked. Nothing
// is written.

#include <filesystem>
#include <string>
#include <vector>

namespace board::cli {

struct DoctorCheck {
    enum class Verdict { ok, warning, failure } verdict = Verdict::ok;
    std::string topic;   ///< `agent claude`, `git`, `sandbox`...
    std::string detail;  ///< one line: what was found, and what to do when it is not right
};

/// Every check, in a fixed order. A failure means the daemon would not start or every run
/// would fail; a warning, that runs may fail or run unconfined.
std::vector<DoctorCheck> check_board(const std::filesystem::path& board);

}  // namespace board::cli
