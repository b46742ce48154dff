#include "support/temp_dir.hpp"

#include <board/event_log.hpp>
#include <board/write_generation.hpp>

#include <catch2/catch.hpp>

#include <fcntl.h>
#include <filesystem>
#include <sys/wait.h>
#include <unistd.h>

namespace fs = std::filesystem;
using namespace board;

namespace {

struct Board : testing::TempDir {
    Board()
        : testing::TempDir("board-generation-") {
        fs::create_directories(tickets() / "PROJ-1");
    }

    fs::path tickets() const { return path() / "tickets"; }

    std::optional<WriteGeneration> read() const {
        const int fd = ::open(tickets().c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        auto generation = read_write_generation(fd);
        ::close(fd);
        return generation;
    }
};

}  // namespace

TEST_CASE("every append moves the board's write generation, before and after the write",
          "[generation]") {
    const Board board;
    bump_write_generation(board.tickets());
    CHECK_FALSE(board.read());  // writers never make the file: readers start it
    start_write_generation(board.tickets());
    REQUIRE(board.read());
    CHECK(board.read()->counter == 0);
    Created created;
    created.ticket = "PROJ-1";
    created.title = "generation";
    const auto first = transact(board.tickets() / "PROJ-1",
                                Actor{ActorKind::human, "ana"},
                                [&](const Ticket&) { return std::vector<Payload>{created}; });
    REQUIRE(std::holds_alternative<Committed>(first));
    const auto after_create = board.read();
    REQUIRE(after_create);
    CHECK(after_create->counter == 2);
    const auto noted =
        transact(board.tickets() / "PROJ-1", Actor{ActorKind::human, "ana"}, [](const Ticket&) {
            return std::vector<Payload>{NoteAdded{"a note"}};
        });
    REQUIRE(std::holds_alternative<Committed>(noted));
    CHECK(board.read()->counter == 4);
    CHECK(board.read()->nonce == after_create->nonce);
}

TEST_CASE("bumps from many processes at once are never lost", "[generation]") {
    const Board board;
    start_write_generation(board.tickets());
    const auto start = board.read();
    REQUIRE(start);
    constexpr int processes = 8;
    constexpr int bumps = 500;
    std::vector<pid_t> children;
    for (int p = 0; p < processes; ++p) {
        const pid_t pid = ::fork();
        REQUIRE(pid >= 0);
        if (pid == 0) {
            for (int i = 0; i < bumps; ++i) bump_write_generation(board.tickets());
            ::_exit(0);
        }
        children.push_back(pid);
    }
    for (const pid_t pid : children) {
        int status = 0;
        REQUIRE(::waitpid(pid, &status, 0) == pid);
        CHECK(WIFEXITED(status));
    }
    CHECK(board.read()->counter == start->counter + processes * bumps);
}

TEST_CASE("a generation file removed or damaged comes back with another nonce", "[generation]") {
    const Board board;
    start_write_generation(board.tickets());
    bump_write_generation(board.tickets());
    const auto before = board.read();
    REQUIRE(before);
    const fs::path file = board.tickets() / std::string{generation_file_name};
    SECTION("removed") {
        fs::remove(file);
    }
    SECTION("truncated by hand") {
        fs::resize_file(file, 3);
    }
    bump_write_generation(board.tickets());  // a damaged file is removed
    CHECK_FALSE(board.read());
    start_write_generation(board.tickets());  // and the next reader makes a new one
    const auto after = board.read();
    REQUIRE(after);
    CHECK(after->nonce != before->nonce);
}

TEST_CASE("the boot id is read", "[generation]") {
    CHECK(boot_id().size() == 36);  // a UUID
}
