// Issue 3's second concurrency run: real processes adding notes to existing tickets while
// they create new ones on the same board, each as `board note` and `board create` do it.
// Nothing may be lost, duplicated or misnumbered, and the built `board verify` must agree.
#include "support/temp_dir.hpp"

#include <board/board_config.hpp>
#include <board/board_dir.hpp>
#include <board/event_log.hpp>

#include <catch2/catch.hpp>

#include <algorithm>
#include <cstdlib>
#include <fcntl.h>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <spawn.h>
#include <sstream>
#include <string>
#include <sys/wait.h>
#include <unistd.h>
#include <vector>

#ifndef BOARD_BINARY
#error "BOARD_BINARY must name the built board executable"
#endif
#ifndef BOARD_LOG_WRITER
#error "BOARD_LOG_WRITER must name the built board_log_writer executable"
#endif

namespace fs = std::filesystem;
using namespace board;

namespace {

std::string slurp(const fs::path& path) {
    std::ifstream in{path, std::ios::binary};
    std::ostringstream text;
    text << in.rdbuf();
    return std::move(text).str();
}

/// Starts `exe args...` with its standard output sent to `out`.
pid_t spawn(const std::string& exe, std::vector<std::string> args, const fs::path& out) {
    posix_spawn_file_actions_t actions;
    REQUIRE(posix_spawn_file_actions_init(&actions) == 0);
    REQUIRE(posix_spawn_file_actions_addopen(
                &actions, 1, out.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644) == 0);
    std::vector<char*> argv{const_cast<char*>(exe.c_str())};  // NOLINT: posix_spawn's signature
    for (auto& a : args) argv.push_back(a.data());
    argv.push_back(nullptr);
    pid_t pid = -1;
    const int rc = posix_spawn(&pid, exe.c_str(), &actions, nullptr, argv.data(), environ);
    posix_spawn_file_actions_destroy(&actions);
    REQUIRE(rc == 0);
    return pid;
}

/// The exit code, or 128 + the signal that ended it.
int wait_for(pid_t pid) {
    int status = 0;
    while (::waitpid(pid, &status, 0) < 0) {
        if (errno != EINTR) return -1;
    }
    return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

struct Ran {
    int exit_code = -1;
    std::string out;
};

Ran run_board(const fs::path& scratch, std::vector<std::string> args) {
    const fs::path out = scratch / "board.out";
    const int code = wait_for(spawn(BOARD_BINARY, std::move(args), out));
    return {code, slurp(out)};
}

}  // namespace

TEST_CASE("8 processes adding notes and creating tickets on one board lose and duplicate nothing",
          "[log_writer][processes]") {
    const testing::TempDir tmp{"board-mixed-", testing::memory_backed_root()};
    // The board and its two seed tickets through the library: an ASan `board` takes most of a
    // second to start on this VM, and verify below runs the real one.
    const fs::path root = tmp.path() / "board";
    fs::create_directories(root / "tickets");
    std::ofstream{root / "board.yaml"} << default_board_yaml("PROJ");
    const std::vector<std::string> seeds{"PROJ-1", "PROJ-2"};
    for (const auto& seed : seeds) {
        const TicketFiller fill = [&](const std::string& id, const fs::path& folder) {
            Created created;
            created.ticket = id;
            created.title = "Seed " + id;
            const auto result = transact(folder, {ActorKind::human, "ana"}, [&](const Ticket&) {
                return std::vector<Payload>{created};
            });
            return std::holds_alternative<Committed>(result);
        };
        const auto id = create_ticket_folder(root, "PROJ", fill);
        REQUIRE(id);
        REQUIRE(id.value() == seed);
    }

    // 500 operations each: every tenth creates a ticket, the rest alternate notes on the seeds.
    constexpr int writers = 8;
    constexpr int each = 500;
    constexpr int creates_each = each / 10;
    std::vector<pid_t> pids;
    for (int w = 0; w < writers; ++w) {
        std::vector<std::string> args{"--board", root.string(), std::to_string(each)};
        args.insert(args.end(), seeds.begin(), seeds.end());
        pids.push_back(spawn(BOARD_LOG_WRITER, args, tmp.path() / ("out" + std::to_string(w))));
    }
    for (const pid_t pid : pids) CHECK(wait_for(pid) == 0);

    // What the writers were told was durable.
    std::map<std::string, std::set<std::int64_t>> acked_notes;
    std::vector<std::string> created;
    for (int w = 0; w < writers; ++w) {
        std::istringstream lines{slurp(tmp.path() / ("out" + std::to_string(w)))};
        int count = 0;
        for (std::string kind, id; lines >> kind >> id; ++count) {
            if (kind == "created") {
                created.push_back(id);
                continue;
            }
            REQUIRE(kind == "note");
            std::int64_t seq = 0;
            REQUIRE(lines >> seq);
            CHECK(acked_notes[id].insert(seq).second);
        }
        CHECK(count == each);
    }

    // Ids are claimed under the board lock: distinct, and contiguous after the seeds.
    std::set<std::string> expected_ids;
    for (int n = 3; n < 3 + writers * creates_each; ++n)
        expected_ids.insert("PROJ-" + std::to_string(n));
    CHECK(std::set<std::string>(created.begin(), created.end()) == expected_ids);
    CHECK(created.size() == expected_ids.size());

    // Every log: seqs 1..N, what was acknowledged, and no event id twice on the board.
    std::set<std::string> event_ids;
    std::int64_t events = 0;
    std::int64_t folders = 0;
    for (const auto& entry : fs::directory_iterator{root / "tickets"}) {
        if (!entry.is_directory()) continue;
        ++folders;
        const std::string id = entry.path().filename().string();
        CAPTURE(id);
        std::int64_t seq = 0;
        std::set<std::int64_t> note_seqs;
        const auto read = read_log(entry.path() / "events.jsonl", [&](const Event& e) {
            CHECK(e.seq == ++seq);
            CHECK(event_ids.insert(e.id).second);
            if (std::holds_alternative<NoteAdded>(e.payload)) note_seqs.insert(e.seq);
        });
        REQUIRE(std::holds_alternative<ReadReport>(read));
        CHECK(std::get<ReadReport>(read).warnings.empty());
        CHECK(note_seqs == acked_notes[id]);
        events += seq;
    }
    CHECK(folders == 2 + writers * creates_each);
    CHECK(events == 2 + writers * each);  // the seeds' `created`, then exactly 4000 new events

    const Ran verified = run_board(tmp.path(), {"verify", "--board", root.string()});
    INFO(verified.out);
    CHECK(verified.exit_code == 0);
    CHECK(verified.out.find("FAULT") == std::string::npos);
    CHECK(verified.out.find(std::to_string(folders) + " ticket(s) checked, all hold") !=
          std::string::npos);
}
