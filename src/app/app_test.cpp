// The application layer on a real board folder: typed results, refusals by kind, and the
// kept board following changes.

#include "app/app_test_support.hpp"

#include <board/app.hpp>
#include <board/codec.hpp>

#include <boost/json.hpp>
#include <catch2/catch.hpp>

#include <cerrno>
#include <cstring>
#include <fcntl.h>
#include <filesystem>
#include <sstream>
#include <sys/file.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <thread>
#include <unistd.h>

namespace fs = std::filesystem;
using namespace board;
using namespace board::app;
using Kind = Refusal::Kind;
using app_test::ana;
using app_test::TempBoard;

namespace {

std::string create(Board& board, const std::string& title, CreateRequest request = {}) {
    request.title = title;
    auto made = board.create(request, ana);
    REQUIRE(made);
    return made.value().ticket.id;
}

std::vector<std::string> ids(const Picked& picked) {
    std::vector<std::string> out;
    for (const auto* e : picked.entries) out.push_back(e->ticket.id);
    return out;
}

}  // namespace

TEST_CASE("a write returns the ticket it made, a refusal says its kind and why", "[app]") {
    TempBoard temp;
    Board board{temp.root};
    const auto id = create(board, "First");
    CHECK(id == "P-1");
    CHECK(fs::exists(temp.root / "tickets" / id / "ticket.json"));

    const auto unknown = board.approve("P-9", "", ana);
    REQUIRE_FALSE(unknown);
    CHECK(unknown.error().kind == Kind::not_found);
    CHECK(unknown.error().message == "approve: no ticket P-9 on this board");
    CHECK(board.approve("../etc", "", ana).error().kind == Kind::not_found);

    const auto not_awaiting = board.approve(id, "", ana);
    REQUIRE_FALSE(not_awaiting);
    CHECK(not_awaiting.error().kind == Kind::refused);
    CHECK(not_awaiting.error().message.starts_with("approve P-1: the ticket "));

    CHECK(board.reject(id, "  \n", ana).error().kind == Kind::refused);
    CHECK(board.answer("P-1", "yes", "", ana).error().kind == Kind::invalid);
    CHECK(board.move(id, "somewhere", "", ana).error().kind == Kind::invalid);
    CHECK(board.update(id, {}, ana).error().kind == Kind::invalid);
    CreateRequest two_lines;
    two_lines.title = "two\nlines";
    CHECK(board.create(two_lines, ana).error().kind == Kind::refused);

    const auto noted = board.note(id, "by hand", NoteFrom::human, ana);
    REQUIRE(noted);
    CHECK(noted.value().ticket.notes.size() == 1);
    CHECK(noted.value().ticket.notes.back().from == ActorKind::human);
    const auto agents = board.note(id, "the agent's", NoteFrom::agent, ana);
    REQUIRE(agents);
    CHECK(agents.value().ticket.notes.back().from == ActorKind::agent);
}

TEST_CASE("a program's record builds once, from the log under its lock, and starts no log",
          "[app]") {
    TempBoard temp;
    Board board{temp.root};
    const auto id = create(board, "Recorded");
    const fs::path log = temp.root / "tickets" / id / "events.jsonl";
    const Actor system{ActorKind::system, {}};
    int builds = 0;
    bool locked_while_building = false;
    const Author note = [&](const Ticket& now) {
        ++builds;
        // Another writer could not come between this read and the append.
        const int other = ::open(log.c_str(), O_RDWR | O_CLOEXEC);
        locked_while_building =
            other >= 0 && ::flock(other, LOCK_EX | LOCK_NB) != 0 && errno == EWOULDBLOCK;
        if (other >= 0) ::close(other);
        return std::vector<Authored>{{system, NoteAdded{"after seq " + std::to_string(now.seq)}}};
    };
    const auto recorded = board.record(id, note, std::nullopt, false);
    REQUIRE(recorded);
    CHECK(builds == 1);
    CHECK(locked_while_building);
    CHECK(recorded.value().ticket->notes.back().text == "after seq 1");

    CHECK(board.record(id, note, /*expected_seq=*/1, false).error().kind == Kind::conflict);
    CHECK(builds == 1);  // the ticket moved on: nothing built

    // A folder being made, its log not written yet: no ticket, and left as it was.
    fs::create_directories(temp.root / "tickets" / "P-7");
    const auto early = board.record("P-7", note, std::nullopt, false);
    REQUIRE_FALSE(early);
    CHECK(early.error().kind == Kind::not_found);
    CHECK_FALSE(fs::exists(temp.root / "tickets" / "P-7" / "events.jsonl"));
}

TEST_CASE("board-wide reads: list, next, an unknown epic refused", "[app]") {
    TempBoard temp;
    Board board{temp.root};
    create(board, "Low");
    CreateRequest urgent;
    urgent.priority = 0;
    const auto first = create(board, "Urgent", urgent);

    const auto listed = board.list({});
    REQUIRE(listed);
    CHECK(ids(listed.value()) == std::vector<std::string>{first, "P-1"});
    const auto json = boost::json::parse(to_json(listed.value())).as_array();
    CHECK(json.at(0).at("title").as_string() == "Urgent");

    const auto next = board.next({});
    REQUIRE(next);
    REQUIRE(next.value().ticket);
    CHECK(next.value().ticket->id == first);

    NextRequest human;
    human.human = true;
    CHECK_FALSE(board.next(human).value().ticket);  // nothing awaits a person

    ListFilter children;
    children.parent = "P-1";
    const auto not_an_epic = board.list(children);
    REQUIRE_FALSE(not_an_epic);
    CHECK(not_an_epic.error().kind == Kind::refused);
}

TEST_CASE("show derives an epic's completion from its children, as list does", "[app]") {
    TempBoard temp;
    Board board{temp.root};
    CreateRequest epic;
    epic.type = "epic";
    const auto parent = create(board, "Epic", epic);
    CreateRequest child;
    child.parent = parent;
    const auto only_child = create(board, "Child", child);
    REQUIRE(board.cancel(only_child, "not needed", ana));

    const auto shown = board.show(parent);
    REQUIRE(shown);
    REQUIRE(shown.value().epic);
    CHECK(shown.value().epic->children == 1);
    CHECK(shown.value().done_by_children);
    const auto json = boost::json::parse(to_json(shown.value())).as_object();
    CHECK(json.at("status").as_string() == "done");
    CHECK(json.at("children_done").as_int64() == 1);

    const auto step = board.show(only_child, 1);
    REQUIRE(step);
    CHECK(step.value().ticket.status == Status::backlog);
    CHECK(step.value().folded == 1);
    CHECK(step.value().events.size() == 2);
    CHECK(board.show("P-77").error().kind == Kind::not_found);
}

TEST_CASE("the live board follows what it is told changed, and its own writes", "[app][live]") {
    TempBoard temp;
    LiveBoard live{temp.root};
    Board other{temp.root};  // another process writing the same board
    const auto id = create(live, "Kept");
    REQUIRE(live.list({}).value().entries.size() == 1);

    REQUIRE(live.note(id, "through the live board", NoteFrom::human, ana));
    CHECK(live.list({}).value().entries.front()->notes == 1);

    const auto held = live.list({}).value();  // a reader still holding the kept board
    UpdateRequest rename;
    rename.title = "Renamed";
    REQUIRE(other.update(id, rename, ana));
    live.ticket_changed(id);
    CHECK(live.list({}).value().entries.front()->ticket.title == "Renamed");
    CHECK(held.entries.front()->ticket.title == "Kept");  // what was handed out stays valid

    const auto second = create(other, "Made elsewhere");
    live.ticket_changed(second);
    CHECK(live.list({}).value().entries.size() == 2);

    fs::remove_all(temp.root / "tickets" / second);
    live.everything_changed();
    CHECK(live.list({}).value().entries.size() == 1);
}

TEST_CASE("lists of names: spaces around items are not part of them", "[app]") {
    CHECK(split_list(" a, b,,c ") == std::vector<std::string>{"a", "b", "c"});
    CHECK(parse_status_list("backlog, review") ==
          std::vector<Status>{Status::backlog, Status::review});
    CHECK_FALSE(parse_status_list("backlog,nope"));
    CHECK(parse_awaiting_list("")->empty());
    CHECK(is_valid_person_name("ana"));
    CHECK_FALSE(is_valid_person_name("agent:review"));
    CHECK_FALSE(is_valid_person_name("two words"));
}

namespace {

/// A daemon stand-in on the board's query socket that answers one query with `reply` and
/// hangs up.
class OneReply {
public:
    OneReply(const fs::path& root, std::string reply)
        : fd_(::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0)) {
        sockaddr_un address{};
        address.sun_family = AF_UNIX;
        const std::string path = query_socket_path(root).string();
        std::memcpy(address.sun_path, path.c_str(), path.size() + 1);
        REQUIRE(::bind(fd_, reinterpret_cast<const sockaddr*>(&address), sizeof address) == 0);
        REQUIRE(::listen(fd_, 1) == 0);
        server_ = std::thread([this, reply = std::move(reply)] {
            const int client = ::accept(fd_, nullptr, nullptr);
            if (client < 0) return;
            char request[4096];
            while (::read(client, request, sizeof request) > 0) {
            }
            (void)!::write(client, reply.data(), reply.size());
            ::close(client);
        });
    }

    ~OneReply() {
        server_.join();
        ::close(fd_);
    }

private:
    int fd_;
    std::thread server_;
};

}  // namespace

TEST_CASE("a daemon's answer cut short is never taken for a whole one", "[app][query]") {
    TempBoard b;
    BoardQuery list;
    QueryAnswer whole;
    whole.output = std::string(100, 'x');
    const std::string header = answer_header(whole);

    SECTION("asked for the answer: none, so the logs are asked instead") {
        OneReply daemon(b.root, header + std::string(10, 'x'));
        CHECK_FALSE(ask_daemon(b.root, list).has_value());
    }
    SECTION("streamed to the output: what came is there, and the answer says it is incomplete") {
        OneReply daemon(b.root, header + std::string(10, 'x'));
        std::ostringstream out;
        const auto answer = ask_daemon(b.root, list, std::chrono::seconds{2}, &out);
        REQUIRE(answer.has_value());
        CHECK(out.str() == std::string(10, 'x'));
        CHECK(answer->exit_code == 3);
        CHECK(answer->message.find("incomplete") != std::string::npos);
    }
    SECTION("whole: every byte, exit 0") {
        OneReply daemon(b.root, header + whole.output);
        std::ostringstream out;
        const auto answer = ask_daemon(b.root, list, std::chrono::seconds{2}, &out);
        REQUIRE(answer.has_value());
        CHECK(answer->exit_code == 0);
        CHECK(out.str() == whole.output);
    }
}

TEST_CASE("an answer from a socket another user listens on is not believed", "[app][query]") {
    if (::geteuid() != 0) {
        WARN("SKIPPED: only root can listen as another user here");
        return;
    }
    TempBoard b;
    QueryAnswer made_up;
    made_up.output = "[]\n";
    const std::string reply = answer_header(made_up) + made_up.output;
    int ready[2];
    REQUIRE(::pipe(ready) == 0);
    const pid_t other = ::fork();
    if (other == 0) {
        const int fd = ::socket(AF_UNIX, SOCK_STREAM, 0);
        sockaddr_un address{};
        address.sun_family = AF_UNIX;
        const std::string path = query_socket_path(b.root).string();
        std::memcpy(address.sun_path, path.c_str(), path.size() + 1);
        if (::bind(fd, reinterpret_cast<const sockaddr*>(&address), sizeof address) != 0 ||
            ::setuid(65534) != 0 || ::listen(fd, 1) != 0)
            ::_exit(1);
        (void)!::write(ready[1], "r", 1);
        const int client = ::accept(fd, nullptr, nullptr);
        if (client >= 0) (void)!::write(client, reply.data(), reply.size());
        ::_exit(0);
    }
    ::close(ready[1]);
    char byte = 0;
    REQUIRE(::read(ready[0], &byte, 1) == 1);
    ::close(ready[0]);
    std::ostringstream out;
    CHECK_FALSE(ask_daemon(b.root, BoardQuery{}, std::chrono::seconds{2}, &out).has_value());
    CHECK(out.str().empty());
    int status = 0;
    ::waitpid(other, &status, 0);
}

TEST_CASE("a query streamed to its output is the answer kept whole, byte for byte",
          "[app][query]") {
    TempBoard temp;
    Board board{temp.root};
    // Long titles: a list --json of more than 128 KB (its pieces on two threads are tested below).
    const std::string long_title(300, 't');
    for (int i = 0; i < 250; ++i) create(board, long_title + std::to_string(i));

    for (const auto kind :
         {BoardQuery::Kind::list, BoardQuery::Kind::ready, BoardQuery::Kind::next}) {
        BoardQuery query;
        query.kind = kind;
        const QueryAnswer kept = answer_query(board, query);
        std::ostringstream streamed;
        const QueryAnswer answer = answer_query(board, query, &streamed);
        CHECK(answer.output.empty());
        CHECK(answer.exit_code == kept.exit_code);
        CHECK(answer.message == kept.message);
        CHECK(streamed.str() == kept.output);
        if (kind == BoardQuery::Kind::list) {
            CHECK(kept.output.size() > 2 * 64 * 1024);
            CHECK(boost::json::parse(streamed.str()).as_array().size() == 250);
        }
    }
}

TEST_CASE("a long list is written in pieces on two threads that join into one array, in order",
          "[app][query]") {
    // More entries than write_json writes on one thread: every other piece is written on a
    // second thread and must follow the one before it exactly. Not a whole number of pieces.
    constexpr int count = 3001;
    std::vector<CatalogEntry> entries;
    for (int i = 1; i <= count; ++i) {
        Ticket t;
        t.id = "PROJ-" + std::to_string(i);
        t.title = "ticket \"" + std::to_string(i) + "\"";
        t.status = i % 3 == 0 ? Status::review : Status::backlog;
        t.awaiting = i % 3 == 0 ? std::optional<Awaiting>{Awaiting::review} : std::nullopt;
        t.seq = i;
        entries.push_back(summarize(t));
    }
    Picked picked;
    picked.catalog = std::make_shared<const Catalog>(std::move(entries));
    for (const auto& entry : picked.catalog->entries()) picked.entries.push_back(&entry);
    picked.policy = Policy{};
    picked.now = 1'700'000'000'000;

    std::vector<std::string> pieces;
    write_json(picked, [&](std::string_view piece) { pieces.emplace_back(piece); });
    std::string whole;
    for (const auto& piece : pieces) whole += piece;
    CHECK(pieces.size() > 2);  // it was handed on in pieces, not kept whole
    CHECK(whole == to_json(picked));
    REQUIRE(whole.ends_with("]\n"));

    const auto array = boost::json::parse(whole).as_array();
    REQUIRE(array.size() == count);
    for (int i = 1; i <= count; ++i)
        REQUIRE(array[static_cast<std::size_t>(i - 1)].at("id").as_string() ==
                "PROJ-" + std::to_string(i));
    // Each entry is what the same entry alone is written as, at the pieces' seams too.
    for (const int i : {1, 256, 257, 512, 513, count / 2, count - 1, count}) {
        Picked alone = picked;
        alone.entries = {picked.entries[static_cast<std::size_t>(i - 1)]};
        const auto single = boost::json::parse(to_json(alone)).as_array();
        CHECK(array[static_cast<std::size_t>(i - 1)] == single.at(0));
        CHECK(array[static_cast<std::size_t>(i - 1)].at("id").as_string() ==
              "PROJ-" + std::to_string(i));
    }
}
