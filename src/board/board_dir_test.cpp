#include "support/temp_dir.hpp"

#include <board/board_dir.hpp>

#include <catch2/catch.hpp>

#include <algorithm>
#include <chrono>
#include <csignal>
#include <cstdlib>
#include <fcntl.h>
#include <filesystem>
#include <fstream>
#include <set>
#include <string>
#include <sys/file.h>
#include <sys/wait.h>
#include <thread>
#include <unistd.h>
#include <vector>

namespace {

namespace fs = std::filesystem;
using namespace board;
using namespace std::chrono_literals;
using Catch::Matchers::Contains;

/// A fresh folder under the temp dir, removed at scope exit.
struct TempDir : testing::TempDir {
    TempDir()
        : testing::TempDir("board_dir_test_") {}
};

void touch(const fs::path& file) {
    std::ofstream{file} << "prefix: PROJ\n";
}

/// A create whose ticket is one file naming its id, as a log would.
BoardDirResult<std::string> create_ticket(const fs::path& board,
                                          std::string_view prefix,
                                          std::chrono::milliseconds lock_timeout = 10s) {
    const TicketFiller fill = [](const std::string& id, const fs::path& folder) {
        std::ofstream{folder / "events.jsonl"} << id << "\n";
        return true;
    };
    return create_ticket_folder(board, prefix, fill, lock_timeout);
}

std::string first_line(const fs::path& file) {
    std::ifstream in{file};
    std::string line;
    std::getline(in, line);
    return line;
}

/// Creates `count` tickets and returns their ids, or stops at the first error (returned as its
/// message, which can never look like an id).
std::vector<std::string> allocate_many(const fs::path& board, int count) {
    std::vector<std::string> ids;
    for (int i = 0; i < count; ++i) {
        auto id = create_ticket(board, "PROJ", 30s);
        if (!id) {
            ids.push_back("error: " + id.error().message);
            break;
        }
        ids.push_back(std::move(id).value());
    }
    return ids;
}

/// The ids must be exactly PROJ-1 .. PROJ-n, each once.
void check_contiguous(const std::vector<std::string>& ids, const fs::path& board) {
    std::set<std::string> distinct(ids.begin(), ids.end());
    CHECK(distinct.size() == ids.size());
    for (std::size_t n = 1; n <= ids.size(); ++n) {
        const std::string id = "PROJ-" + std::to_string(n);
        CHECK(distinct.count(id) == 1);
        CHECK(first_line(board / "tickets" / id / "events.jsonl") == id);
    }
}

}  // namespace

TEST_CASE("find_board finds the nearest ancestor holding board.yaml") {
    const TempDir tmp;
    const fs::path outer = tmp.path() / "outer";
    const fs::path inner = outer / "a" / "inner";
    const fs::path deep = inner / "b" / "c";
    fs::create_directories(deep);
    touch(outer / "board.yaml");
    CHECK(find_board(deep) == outer);
    CHECK(find_board(outer) == outer);
    touch(inner / "board.yaml");
    CHECK(find_board(deep) == inner);
    CHECK(find_board(inner / "b" / ".." / "b" / "c") == inner);
    CHECK_FALSE(find_board(tmp.path()));

    fs::create_directories(tmp.path() / "dir_named" / "board.yaml");  // a folder is no board
    CHECK_FALSE(find_board(tmp.path() / "dir_named"));
}

TEST_CASE("ticket_dir forms a path only for a valid id") {
    const fs::path board{"/b"};
    CHECK(ticket_dir(board, "PROJ-12") == fs::path{"/b/tickets/PROJ-12"});
    CHECK(ticket_dir(board, "A-1") == fs::path{"/b/tickets/A-1"});
    const std::string bad = GENERATE(as<std::string>{},
                                     "",
                                     "PROJ",
                                     "PROJ-",
                                     "proj-1",
                                     "PROJ-1/../../etc",
                                     "../PROJ-1",
                                     "PROJ-1/",
                                     "/PROJ-1",
                                     "PROJ-1234567890",
                                     "PROJ--1",
                                     ".lock",
                                     "ABCDEFGHIJKLMNOPQ-1",
                                     std::string{"PROJ-1\0x", 8});
    CAPTURE(bad);
    CHECK_FALSE(ticket_dir(board, bad));
}

TEST_CASE("allocate_ticket_id takes max+1 of this prefix and claims the folder") {
    const TempDir tmp;
    const fs::path board = tmp.path();
    auto first = create_ticket(board, "PROJ");  // creates tickets/ on first use
    REQUIRE(first);
    CHECK(first.value() == "PROJ-1");
    CHECK(first_line(board / "tickets" / "PROJ-1" / "events.jsonl") == "PROJ-1");

    // Gaps are not refilled, other prefixes and junk are ignored, numbers compare as numbers.
    fs::create_directory(board / "tickets" / "PROJ-9");
    fs::create_directory(board / "tickets" / "PROJ-10");
    fs::create_directory(board / "tickets" / "OTHER-500");
    fs::create_directory(board / "tickets" / "PROJX-77");
    fs::create_directory(board / "tickets" / "PROJ-x");
    touch(board / "tickets" / "notes.txt");
    auto next = create_ticket(board, "PROJ");
    REQUIRE(next);
    CHECK(next.value() == "PROJ-11");
    auto other = create_ticket(board, "OTHER");
    REQUIRE(other);
    CHECK(other.value() == "OTHER-501");
    auto fresh = create_ticket(board, "NEW");
    REQUIRE(fresh);
    CHECK(fresh.value() == "NEW-1");
}

TEST_CASE("allocate_ticket_id skips listing the folder while tickets/.last-id holds") {
    const TempDir tmp;
    const fs::path board = tmp.path();
    REQUIRE(allocate_many(board, 3).back() == "PROJ-3");
    const fs::path hint = board / "tickets" / ".last-id";
    REQUIRE(fs::exists(hint));
    const auto links = fs::hard_link_count(board / "tickets");
    const auto write_hint = [&](const std::string& text) { std::ofstream{hint} << text; };

    SECTION("while no folder came or went, the hint is believed (no listing)") {
        write_hint("PROJ 40 " + std::to_string(links) + "\n");
        CHECK(create_ticket(board, "PROJ").value() == "PROJ-41");
    }
    SECTION("a folder made by hand changes the link count: the folder is listed") {
        fs::create_directory(board / "tickets" / "PROJ-20");
        CHECK(create_ticket(board, "PROJ").value() == "PROJ-21");
    }
    SECTION("a hint that is too low never hands out a taken id") {
        write_hint("PROJ 1 " + std::to_string(links) + "\n");
        CHECK(create_ticket(board, "PROJ").value() == "PROJ-4");
    }
    SECTION("another prefix, a stale count or garbage: listed") {
        for (const std::string& text : {"OTHER 40 " + std::to_string(links) + "\n",
                                        "PROJ 40 " + std::to_string(links + 1) + "\n",
                                        std::string{"PROJ forty\n"},
                                        "PROJ -1 " + std::to_string(links) + "\n",
                                        "PROJ 12x " + std::to_string(links) + "\n",
                                        "PROJ 9223372036854775807 " + std::to_string(links) + "\n",
                                        std::string{}}) {
            write_hint(text);
            const auto id = create_ticket(board, "PROJ");
            REQUIRE(id);
            CHECK(id.value() != "PROJ-41");
            fs::remove_all(board / "tickets" / id.value());  // give the number back for the next
        }
    }
}

TEST_CASE("allocate_ticket_id refuses an invalid prefix before touching the disk") {
    const TempDir tmp;
    const std::string prefix = GENERATE(as<std::string>{}, "", "proj", "../X", "A/B", "1A");
    CAPTURE(prefix);
    const auto id = create_ticket(tmp.path(), prefix);
    REQUIRE_FALSE(id);
    CHECK(id.error().kind == BoardDirError::Kind::invalid_id);
    CHECK_FALSE(fs::exists(tmp.path() / "tickets"));
}

TEST_CASE("allocate_ticket_id reports when the number space is exhausted") {
    const TempDir tmp;
    fs::create_directories(tmp.path() / "tickets" / "PROJ-999999999");
    const auto id = create_ticket(tmp.path(), "PROJ");
    REQUIRE_FALSE(id);
    CHECK(id.error().kind == BoardDirError::Kind::exhausted);
}

TEST_CASE("allocate_ticket_id reports an unusable board as an I/O error") {
    const TempDir tmp;
    touch(tmp.path() / "not_a_dir");
    const auto id = create_ticket(tmp.path() / "not_a_dir", "PROJ");
    REQUIRE_FALSE(id);
    CHECK(id.error().kind == BoardDirError::Kind::io);
    CHECK_THAT(id.error().message, Contains("not_a_dir"));
}

TEST_CASE("allocate_ticket_id times out while another holder keeps the board lock") {
    const TempDir tmp;
    fs::create_directories(tmp.path() / "tickets");
    const std::string lock_path = (tmp.path() / "tickets" / ".lock").string();
    const int holder = ::open(lock_path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0666);
    REQUIRE(holder >= 0);
    REQUIRE(::flock(holder, LOCK_EX) == 0);

    const auto started = std::chrono::steady_clock::now();
    const auto id = create_ticket(tmp.path(), "PROJ", 100ms);
    const auto waited = std::chrono::steady_clock::now() - started;
    REQUIRE_FALSE(id);
    CHECK(id.error().kind == BoardDirError::Kind::lock_timeout);
    CHECK_THAT(id.error().message, Contains(".lock"));
    CHECK(waited >= 100ms);
    CHECK(waited < 5s);
    CHECK_FALSE(fs::exists(tmp.path() / "tickets" / "PROJ-1"));

    ::close(holder);  // released: the next caller gets in
    const auto after = create_ticket(tmp.path(), "PROJ", 100ms);
    REQUIRE(after);
    CHECK(after.value() == "PROJ-1");
}

TEST_CASE("concurrent processes creating tickets get distinct, contiguous ids") {
    const TempDir tmp;
    touch(tmp.path() / "board.yaml");
    constexpr int processes = 6;
    constexpr int per_process = 50;

    std::vector<std::pair<pid_t, int>> children;  // pid, read end of its pipe
    for (int p = 0; p < processes; ++p) {
        int fds[2];
        REQUIRE(::pipe(fds) == 0);
        const pid_t pid = ::fork();
        REQUIRE(pid >= 0);
        if (pid == 0) {
            // The child does no Catch2 work: it reports through the pipe and _exits, so no
            // test machinery or atexit handler runs twice.
            ::close(fds[0]);
            std::string out;
            for (const auto& id : allocate_many(tmp.path(), per_process)) out += id + "\n";
            const char* data = out.data();
            std::size_t left = out.size();
            while (left > 0) {
                const ssize_t n = ::write(fds[1], data, left);
                if (n <= 0) ::_exit(2);
                data += n;
                left -= static_cast<std::size_t>(n);
            }
            ::_exit(0);
        }
        ::close(fds[1]);
        children.emplace_back(pid, fds[0]);
    }

    std::vector<std::string> ids;
    for (const auto& [pid, fd] : children) {
        std::string text;
        char buffer[4096];
        for (ssize_t n; (n = ::read(fd, buffer, sizeof buffer)) > 0;) {
            text.append(buffer, static_cast<std::size_t>(n));
        }
        ::close(fd);
        int status = 0;
        REQUIRE(::waitpid(pid, &status, 0) == pid);
        CHECK(WIFEXITED(status));
        CHECK(WEXITSTATUS(status) == 0);
        for (std::size_t start = 0, end; (end = text.find('\n', start)) != std::string::npos;
             start = end + 1) {
            ids.push_back(text.substr(start, end - start));
        }
    }
    for (const auto& id : ids) CHECK_THAT(id, !Contains("error"));
    REQUIRE(ids.size() == std::size_t{processes * per_process});
    check_contiguous(ids, tmp.path());
}

TEST_CASE("concurrent threads creating tickets get distinct, contiguous ids") {
    // Each call opens its own descriptor, and flock locks are per open file description, so
    // threads of one process exclude each other just as processes do.
    const TempDir tmp;
    constexpr int threads = 6;
    constexpr int per_thread = 50;
    std::vector<std::vector<std::string>> results(threads);
    {
        std::vector<std::thread> workers;
        for (auto& result : results) {
            workers.emplace_back(
                [&result, &tmp] { result = allocate_many(tmp.path(), per_thread); });
        }
        for (auto& worker : workers) worker.join();
    }
    std::vector<std::string> ids;
    for (const auto& result : results) ids.insert(ids.end(), result.begin(), result.end());
    for (const auto& id : ids) CHECK_THAT(id, !Contains("error"));
    REQUIRE(ids.size() == std::size_t{threads * per_thread});
    check_contiguous(ids, tmp.path());
}

TEST_CASE("the filler writes into a private staging folder, and giving up leaves nothing") {
    const TempDir tmp;
    const fs::path tickets = tmp.path() / "tickets";
    std::string seen_id;
    fs::path seen_folder;
    bool was_empty = false;
    const TicketFiller decline = [&](const std::string& id, const fs::path& folder) {
        seen_id = id;
        seen_folder = folder;
        was_empty = fs::is_empty(folder);
        std::ofstream{folder / "events.jsonl"} << "half a ticket";
        return false;
    };
    const auto declined = create_ticket_folder(tmp.path(), "PROJ", decline);
    REQUIRE_FALSE(declined);
    CHECK(declined.error().kind == BoardDirError::Kind::declined);
    CHECK(seen_id == "PROJ-1");
    CHECK(seen_folder.parent_path() == tickets);
    CHECK(seen_folder.filename().string().front() == '.');  // no reader lists a dot name
    CHECK(was_empty);
    CHECK_FALSE(fs::exists(tickets / "PROJ-1"));
    CHECK_FALSE(fs::exists(seen_folder));

    // The number was never handed out, so the next create takes it.
    CHECK(create_ticket(tmp.path(), "PROJ").value() == "PROJ-1");
}

TEST_CASE("a create killed while it writes leaves no ticket, and the next one cleans up") {
    const TempDir tmp;
    const fs::path tickets = tmp.path() / "tickets";
    REQUIRE(create_ticket(tmp.path(), "PROJ").value() == "PROJ-1");
    const pid_t pid = ::fork();
    REQUIRE(pid >= 0);
    if (pid == 0) {
        const TicketFiller killed = [](const std::string&, const fs::path& folder) {
            std::ofstream{folder / "events.jsonl"} << "{\"v\":1,\"seq\":1";  // half a line
            ::raise(SIGKILL);
            return true;
        };
        (void)create_ticket_folder(tmp.path(), "PROJ", killed);
        ::_exit(0);
    }
    int status = 0;
    REQUIRE(::waitpid(pid, &status, 0) == pid);
    REQUIRE(WIFSIGNALED(status));

    // Every name a reader lists is a whole ticket.
    std::vector<std::string> listed;
    for (const auto& entry : fs::directory_iterator(tickets))
        if (entry.is_directory() && entry.path().filename().string().front() != '.')
            listed.push_back(entry.path().filename().string());
    CHECK(listed == std::vector<std::string>{"PROJ-1"});

    CHECK(create_ticket(tmp.path(), "PROJ").value() == "PROJ-2");
    CHECK(first_line(tickets / "PROJ-2" / "events.jsonl") == "PROJ-2");
    for (const auto& entry : fs::directory_iterator(tickets))
        CHECK_FALSE(entry.path().filename() == ".creating");
}

TEST_CASE("a name taken behind the lock's back is stepped over, never overwritten") {
    const TempDir tmp;
    const fs::path tickets = tmp.path() / "tickets";
    REQUIRE(create_ticket(tmp.path(), "PROJ").value() == "PROJ-1");
    // A folder made by hand between the hint and the claim: the hint still says PROJ-1.
    int calls = 0;
    const TicketFiller make_rival = [&](const std::string& id, const fs::path& folder) {
        if (++calls == 1) {
            fs::create_directory(tickets / id);
            std::ofstream{tickets / id / "events.jsonl"} << "rival\n";
        }
        std::ofstream{folder / "events.jsonl"} << id << "\n";
        return true;
    };
    const auto id = create_ticket_folder(tmp.path(), "PROJ", make_rival);
    REQUIRE(id);
    CHECK(id.value() == "PROJ-3");
    CHECK(calls == 2);
    CHECK(first_line(tickets / "PROJ-2" / "events.jsonl") == "rival");
    CHECK(first_line(tickets / "PROJ-3" / "events.jsonl") == "PROJ-3");
}
