// The stray sweep (strays.hpp) on its own: what it takes for a run's helper. Whole runs and
// their strays are in agent_process_test.cpp.

#include "orchestrator/strays.hpp"

#include "support/temp_dir.hpp"

#include <catch2/catch.hpp>

#include <chrono>
#include <csignal>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <sys/wait.h>
#include <thread>
#include <unistd.h>

using namespace board::orchestrator;
namespace fs = std::filesystem;
using namespace std::chrono_literals;

TEST_CASE("a helper of a run still going is not taken for a stray while it execs") {
    // Inside execve a process's environment reads empty: a sweep then must not judge it by
    // the run its environment would have named. The helper execs itself hundreds of times,
    // its environment naming a run still going, while sweeps run back to back.
    const board::testing::TempDir scratch{"board-sweep-"};
    const auto script = scratch.path() / "again.sh";
    std::ofstream{script} << "#!/bin/sh\nif [ \"$1\" -gt 0 ]; then exec \"$0\" $(($1 - 1)); fi\n"
                             "exec sleep 300\n";
    fs::permissions(script, fs::perms::owner_all);
    const RunOfProcess going{(scratch.path() / "T-1").string(), "0002"};
    const pid_t not_a_process = 4'194'304;  // above pid_max: the run's agent, as noted
    note_launched(not_a_process, going);
    const std::string run_env = "BOARD_RUN=" + going.run;
    const std::string dir_env = "BOARD_TICKET_DIR=" + going.ticket_dir;
    char* const env[] = {const_cast<char*>(run_env.c_str()),
                         const_cast<char*>(dir_env.c_str()),
                         const_cast<char*>("PATH=/usr/bin:/bin"),
                         nullptr};
    const pid_t helper = ::fork();
    REQUIRE(helper >= 0);
    if (helper == 0) {
        ::execle(script.c_str(), script.c_str(), "400", static_cast<char*>(nullptr), env);
        ::_exit(127);
    }
    const auto stat_of = [&] {
        std::ifstream in{"/proc/" + std::to_string(helper) + "/stat"};
        return std::string{std::istreambuf_iterator<char>{in}, {}};
    };
    const auto state = [&] {
        const std::string stat = stat_of();
        const auto at = stat.rfind(") ");
        return at == std::string::npos ? 'X' : stat[at + 2];
    };
    const auto deadline = std::chrono::steady_clock::now() + 60s;
    // Swept only once it runs the script: between fork and exec it is a copy of this process,
    // environment and all, which no agent's helper ever is.
    const auto environment = [&] {
        std::ifstream in{"/proc/" + std::to_string(helper) + "/environ"};
        return std::string{std::istreambuf_iterator<char>{in}, {}};
    };
    while (environment().find(run_env) == std::string::npos &&
           std::chrono::steady_clock::now() < deadline)
        std::this_thread::yield();
    int sweeps = 0;
    // Killed, it is a zombie until the next sweep reaps it, then gone ('X').
    while (stat_of().find("(sleep)") == std::string::npos && state() != 'Z' && state() != 'X' &&
           std::chrono::steady_clock::now() < deadline) {
        (void)sweep_strays();
        ++sweeps;
    }
    CAPTURE(sweeps);
    CHECK(stat_of().find("(sleep)") != std::string::npos);
    CHECK(state() != 'Z');  // not killed by a sweep
    ::kill(helper, SIGKILL);
    int status = 0;
    ::waitpid(helper, &status, 0);
    note_waited(not_a_process);
}
