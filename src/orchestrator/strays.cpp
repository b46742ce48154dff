#include "orchestrator/strays.hpp"

#include "support/files.hpp"

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <csignal>
#include <cstdio>
#include <cstring>
#include <dirent.h>
#include <mutex>
#include <optional>
#include <string>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>
#include <unordered_map>
#include <unordered_set>
#include <vector>

namespace board::orchestrator {
namespace {

std::mutex registry_mutex;

/// The threads in launch_noted, between the clone and the note: a child of theirs that is not
/// noted may be that launch.
std::unordered_multiset<pid_t>& launching_threads() {
    static std::unordered_multiset<pid_t> threads;
    return threads;
}

/// The threads besides the main one whose children sweeps judge (sweep_children_of).
std::vector<pid_t>& swept_threads() {
    static std::vector<pid_t> threads;
    return threads;
}

/// `/proc/PID/environ` reads empty while a process is inside execve (its new memory has no
/// environment yet), so a helper of a run still going that execs at the instant of a sweep
/// would pass for a stray. A child whose environment reads empty is judged by later sweeps;
/// one that reads empty for this long has none (started with `env -i`) and is a stray.
constexpr auto environment_unread_for_at_most = std::chrono::milliseconds{500};

/// Children whose environment read empty, and since when.
using UnreadSince = std::unordered_map<pid_t, std::chrono::steady_clock::time_point>;

/// Those of the last sweep (sweep_strays keeps the ones still so).
UnreadSince& unread_since() {
    static UnreadSince since;
    return since;
}

/// The text of /proc/PID/environ; nullopt when it cannot be read or reads empty.
std::optional<std::string> environment_of(pid_t pid) {
    // An environment is at most a few hundred kilobytes (ARG_MAX).
    auto text = read_whole_file(
        "/proc/" + std::to_string(pid) + "/environ", AT_FDCWD, std::size_t{1} << 20);
    if (!text || text->empty()) return std::nullopt;
    return text;
}

RunOfProcess run_in_environment(const std::string& text) {
    RunOfProcess found;
    for (std::size_t at = 0; at < text.size();) {
        const auto end = std::min(text.find('\0', at), text.size());
        const std::string_view entry{text.data() + at, end - at};
        if (entry.starts_with("BOARD_RUN=")) found.run = entry.substr(10);
        if (entry.starts_with("BOARD_TICKET_DIR=")) found.ticket_dir = entry.substr(17);
        at = end + 1;
    }
    return found;
}

/// Every process launched and not yet waited for, with the run it works for.
std::unordered_map<pid_t, RunOfProcess>& launched() {
    static std::unordered_map<pid_t, RunOfProcess> pids;
    return pids;
}

/// Whether `run` is that of a registered process (so it is still going).
bool run_is_going(const std::unordered_map<pid_t, RunOfProcess>& ours, const RunOfProcess& run) {
    if (run.empty()) return false;
    return std::any_of(
        ours.begin(), ours.end(), [&](const auto& launch) { return launch.second == run; });
}

/// The fields of /proc/PID/stat a sweep needs.
struct ProcStat {
    char state = '?';
    pid_t parent = 0;
    pid_t group = 0;
    pid_t session = 0;
};

std::optional<ProcStat> read_stat(pid_t pid) {
    char path[64];
    std::snprintf(path, sizeof path, "/proc/%d/stat", static_cast<int>(pid));
    std::FILE* file = std::fopen(path, "re");
    if (!file) return std::nullopt;
    char text[1024] = {};
    const std::size_t n = std::fread(text, 1, sizeof text - 1, file);
    std::fclose(file);
    // The command name may hold spaces and parentheses: the fields start after the last ')'.
    const char* close = std::strrchr(text, ')');
    if (n == 0 || !close) return std::nullopt;
    ProcStat stat;
    int parent = 0;
    int group = 0;
    int session = 0;
    if (std::sscanf(close + 1, " %c %d %d %d", &stat.state, &parent, &group, &session) != 4)
        return std::nullopt;
    stat.parent = parent;
    stat.group = group;
    stat.session = session;
    return stat;
}

void add_pids(std::vector<pid_t>& out, const std::string& text) {
    std::size_t at = 0;
    while (at < text.size()) {
        char* end = nullptr;
        const long pid = std::strtol(text.c_str() + at, &end, 10);
        if (end == text.c_str() + at) break;
        if (pid > 0) out.push_back(static_cast<pid_t>(pid));
        at = static_cast<std::size_t>(end - text.c_str());
    }
}

/// Numeric entries of a /proc folder.
std::vector<pid_t> numeric_entries(const char* folder) {
    std::vector<pid_t> out;
    DIR* dir = ::opendir(folder);
    if (!dir) return out;
    while (const dirent* entry = ::readdir(dir)) {
        if (entry->d_name[0] >= '1' && entry->d_name[0] <= '9') add_pids(out, entry->d_name);
    }
    ::closedir(dir);
    return out;
}

struct Child {
    pid_t pid = 0;
    pid_t thread = 0;  ///< the thread whose child it is; 0: not known
};

/// This process's children that may be strays (called under registry_mutex). An orphan goes
/// to the first live thread of its subreaper, the main thread (the kernel's find_new_reaper),
/// so the main thread's `children` list holds every stray; an agent's CLONE_PARENT sibling is
/// a child of the thread that launched the agent, so those threads' lists are read too. A
/// child of any other thread is one that thread started itself and waits for (`git diff` for
/// the page on a worker). Where the kernel keeps no such lists (CONFIG_PROC_CHILDREN off),
/// every process whose parent is this one, whichever thread's child it is (`thread` 0).
std::vector<Child> children() {
    std::vector<Child> out;
    const pid_t self = ::getpid();
    bool listed = false;
    std::vector<pid_t> pids;
    std::vector<pid_t> threads{self};
    threads.insert(threads.end(), swept_threads().begin(), swept_threads().end());
    for (const pid_t thread : threads) {
        const auto text =
            read_whole_file("/proc/self/task/" + std::to_string(thread) + "/children");
        if (!text) continue;
        listed = true;
        pids.clear();
        add_pids(pids, *text);
        for (const pid_t pid : pids) out.push_back(Child{pid, thread});
    }
    if (listed) return out;
    for (const pid_t pid : numeric_entries("/proc")) {
        if (const auto stat = read_stat(pid); stat && stat->parent == self)
            out.push_back(Child{pid, 0});
    }
    return out;
}

}  // namespace

RunOfProcess run_of_process(pid_t pid) {
    const auto text = environment_of(pid);
    return text ? run_in_environment(*text) : RunOfProcess{};
}

bool become_subreaper() {
    static const bool done = ::prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0) == 0;
    return done;
}

void note_launched(pid_t pid, RunOfProcess run) {
    const std::lock_guard lock{registry_mutex};
    launched().insert_or_assign(pid, std::move(run));
}

pid_t launch_noted(const std::function<pid_t()>& launch, RunOfProcess run) {
    const pid_t thread = ::gettid();
    {
        const std::lock_guard lock{registry_mutex};
        launching_threads().insert(thread);
    }
    const auto done = [&] { launching_threads().erase(launching_threads().find(thread)); };
    pid_t pid = -1;
    try {
        pid = launch();
    } catch (...) {
        const std::lock_guard lock{registry_mutex};
        done();
        throw;
    }
    const std::lock_guard lock{registry_mutex};
    done();
    if (pid <= 0) return pid;
    try {
        launched().insert_or_assign(pid, std::move(run));
    } catch (...) {
        // Not noted, so no one would wait for it or stop it: stopped now (a later sweep
        // reaps it).
        ::kill(-pid, SIGKILL);
        ::kill(pid, SIGKILL);
        throw;
    }
    return pid;
}

void sweep_children_of(pid_t thread) {
    const std::lock_guard lock{registry_mutex};
    swept_threads().push_back(thread);
}

void stop_sweeping_children_of(pid_t thread) {
    const std::lock_guard lock{registry_mutex};
    auto& threads = swept_threads();
    if (const auto at = std::find(threads.begin(), threads.end(), thread); at != threads.end())
        threads.erase(at);
}

void note_waited(pid_t pid) {
    const std::lock_guard lock{registry_mutex};
    launched().erase(pid);
}

StraySweep sweep_strays() {
    StraySweep sweep;
    const std::lock_guard lock{registry_mutex};
    const auto& ours = launched();
    const auto& launching = launching_threads();
    const auto now = std::chrono::steady_clock::now();
    UnreadSince still_unread;
    for (const auto& [pid, thread] : children()) {
        if (ours.count(pid) != 0) continue;
        // Perhaps a launch not noted yet: a child of a thread launching now, or any child
        // while a launch is in flight where children cannot be told apart by thread. Judged
        // by a later sweep: it may as well be a stray.
        if (thread != 0 ? launching.count(thread) != 0 : !launching.empty()) {
            // Not judged: an environment that read empty before keeps its time.
            if (const auto seen = unread_since().find(pid); seen != unread_since().end())
                still_unread.insert(*seen);
            sweep.deferred = true;
            continue;
        }
        const auto stat = read_stat(pid);
        if (!stat) continue;  // gone already (reaped by whoever launched it)
        if (stat->state == 'Z') {
            int status = 0;
            if (::waitpid(pid, &status, WNOHANG) == pid) ++sweep.reaped;
            continue;
        }
        // Still in the group or session of a process we run, or working for a run still
        // going: part of a run that goes on.
        if (ours.count(stat->group) != 0 || ours.count(stat->session) != 0) continue;
        if (const auto environment = environment_of(pid)) {
            if (run_is_going(ours, run_in_environment(*environment))) continue;
        } else {
            const auto seen = unread_since().find(pid);
            const auto since = seen == unread_since().end() ? now : seen->second;
            if (now - since < environment_unread_for_at_most) {
                still_unread.emplace(pid, since);
                sweep.deferred = true;
                continue;
            }
        }
        if (stat->group == pid) ::kill(-pid, SIGKILL);
        ::kill(pid, SIGKILL);
        ++sweep.stopped;
    }
    unread_since() = std::move(still_unread);
    return sweep;
}

}  // namespace board::orchestrator
