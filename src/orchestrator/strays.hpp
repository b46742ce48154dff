#pragma once
// Processes an agent started that left its process group (`setsid`, a double fork) and so
// escape the group kill that ends a run. This process is made the child subreaper of all
// it starts, so whatever an agent leaves running when its own process ends becomes our child
// instead of init's; a sweep then stops every child we did not launch ourselves (a stray)
// and reaps it. Linux only (PR_SET_CHILD_SUBREAPER, /proc).
//
// Launches are registered (note_launched) by whoever starts a process and waits for it
// itself: the sweep never touches those, nor a stray still in the process group or session
// of one of them (it belongs to a run that is still going).

#include <sys/types.h>

namespace board::orchestrator {

/// Makes this process the subreaper of its descendants, once per process. False when the
/// kernel refuses (then strays go to init and cannot be tracked).
bool become_subreaper();

/// `pid` was started by this process, which waits for it itself: never a stray.
void note_launched(pid_t pid);
/// `pid` was waited for: from now on the number may belong to anyone.
void note_waited(pid_t pid);

struct StraySweep {
    int stopped = 0;  ///< strays sent SIGKILL (with their process group when they lead one)
    int reaped = 0;   ///< strays that had ended and were waited for

    /// Strays found: a sweep that found none left nothing behind.
    int found() const { return stopped + reaped; }
};

/// One pass over this process's children. Thread-safe; cheap when there are none.
StraySweep sweep_strays();

}  // namespace board::orchestrator
