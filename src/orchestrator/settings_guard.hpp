#pragma once
// The settings of the agents' tools that name programs the tool runs, unconfined, for whoever
// starts it next: a hook in `~/.claude/settings.json`, `notify` in `~/.codex/config.toml`.
// A confined agent may write its tool's state, so these are taken as they are when the first
// of the confined runs going at once begins, put back to that after each one ends (an
// interrupted one too), and, when a daemon died during a run, by the next one at its start:
// while runs go on they are kept on disk in the board's private folder.

#include <filesystem>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

namespace board::orchestrator {

/// One guarded path as it was: absent, a regular file's text, or a symbolic link (guarded as
/// the link it is, never through it).
struct GuardedFile {
    enum class Kind { absent, file, link };
    std::filesystem::path path;
    Kind kind = Kind::absent;
    std::string content;  ///< the file's text, or the link's target as written
    friend bool operator==(const GuardedFile&, const GuardedFile&) = default;
};

class SettingsGuard {
public:
    /// `files`: the paths as the tools name them. `kept`: where the settings as they were are
    /// kept while runs go on (a file in the board's private folder).
    SettingsGuard(std::vector<std::filesystem::path> files, std::filesystem::path kept);

    /// Held by a confined run from before its launch to its end: the first one takes the
    /// settings as they are, the last one to let go forgets them.
    class Run {
    public:
        explicit Run(std::shared_ptr<SettingsGuard> guard);
        ~Run();
        Run(const Run&) = delete;
        Run& operator=(const Run&) = delete;

    private:
        std::shared_ptr<SettingsGuard> guard_;
    };

    /// Puts back every guarded path that is not as it was when the runs going now began,
    /// keeping a changed file's text in `changed_dir` as `changed-<name>`. One line per path
    /// put back (or that could not be).
    std::vector<std::string> put_back(const std::filesystem::path& changed_dir);

    /// At start, before any run: settings a daemon that died during a run had kept are put
    /// back, and the kept file removed. One line per path put back.
    std::vector<std::string> recover(const std::filesystem::path& changed_dir);

private:
    void begin();
    void end();
    std::vector<std::string> put_back_locked(const std::vector<GuardedFile>& before,
                                             const std::filesystem::path& changed_dir);

    std::vector<std::filesystem::path> files_;
    std::filesystem::path kept_;
    std::mutex mutex_;
    int runs_ = 0;                     ///< confined runs holding a Run
    std::vector<GuardedFile> before_;  ///< as they were when the first of them began
};

/// How `path` is now (a file over `max_bytes`, or one that cannot be read: nullopt).
std::optional<GuardedFile> guarded_state(const std::filesystem::path& path);

}  // namespace board::orchestrator
