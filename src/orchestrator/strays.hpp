#pragma once
// Processes an agent started that left its process group (`setsid`, a double fork) and so
// escape the group kill that ends a run. This process is made the child subreaper of all
// it starts, so whatever an agent leaves running when its own process ends becomes our child
// instead of init's; a sweep then stops every child we did not launch ourselves (a stray)
// and reaps it. Orphans come back to the main thread, so its children are judged, and those
// of a thread that launches agents (sweep_children_of); any other thread's child is its own
// (the page's `git diff` on a worker is never taken for a stray). Linux only
// (PR_SET_CHILD_SUBREAPER, /proc).
//
// Launches are registered (note_launched) by whoever starts a process and waits for it
// itself: the sweep never touches those, nor a stray that still belongs to a run that is
// going: one in the process group or session of a registered process, or one whose
// environment names the run of one (an agent's daemonized helper is re-parented to us while
// its agent still works).

#include <functional>
#include <string>
#include <sys/types.h>

namespace board::orchestrator {

/// The run a process works for, as its environment says: every agent is started with
/// BOARD_TICKET_DIR and BOARD_RUN, and whatever it starts inherits them.
struct RunOfProcess {
    std::string ticket_dir;  ///< BOARD_TICKET_DIR
    std::string run;         ///< BOARD_RUN

    bool empty() const { return ticket_dir.empty() || run.empty(); }

    bool operator==(const RunOfProcess&) const = default;
};

/// What /proc/PID/environ names; empty when it names no run or cannot be read (the process
/// ended, belongs to another user, or is inside execve at that instant).
RunOfProcess run_of_process(pid_t pid);

/// Makes this process the subreaper of its descendants, once per process. False when the
/// kernel refuses (then strays go to init and cannot be tracked).
bool become_subreaper();

/// `pid` was started by this process, which waits for it itself: never a stray. `run`: the
/// run it works for (empty for none); strays that name it are left alone while it runs.
void note_launched(pid_t pid, RunOfProcess run = {});
/// Calls `launch` (which returns the pid it started, or -1) and notes the process as
/// note_launched does. Until then a sweep leaves the launching thread's children alone: a
/// launch on another thread than the sweeps' is never taken for a stray, and a sweep never
/// waits for a launch.
pid_t launch_noted(const std::function<pid_t()>& launch, RunOfProcess run = {});
/// `pid` was waited for: from now on the number may belong to anyone.
void note_waited(pid_t pid);

/// Sweeps judge the children of `thread` (one of this process's) too, as they judge the main
/// thread's, until stop_sweeping_children_of(thread): for a thread that launches agents, whose
/// children then include any process an agent made its own sibling (clone's CLONE_PARENT).
/// Every child such a thread starts must be noted (launch_noted).
void sweep_children_of(pid_t thread);
void stop_sweeping_children_of(pid_t thread);

struct StraySweep {
    int stopped = 0;  ///< strays sent SIGKILL (with their process group when they lead one)
    int reaped = 0;   ///< strays that had ended and were waited for
    /// Children left unjudged: a launch was in flight on the thread whose children they are
    /// (or the kernel does not say which thread's child each is), or a child's environment
    /// read empty (it may be inside execve; one that stays so for half a second is a stray).
    /// Sweep again later.
    bool deferred = false;

    /// Strays found: a sweep that found none left nothing behind.
    int found() const { return stopped + reaped; }
};

/// One pass over this process's children. Thread-safe; cheap when there are none.
StraySweep sweep_strays();

}  // namespace board::orchestrator
