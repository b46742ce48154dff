// Tests live events: the event feed's numbering and resume, and Server-Sent Events end to end.

#include "http/event_feed.hpp"
#include "http/http_test_support.hpp"

#include <board/app.hpp>
#include <board/board_dir.hpp>
#include <board/event_log.hpp>
#include <board/http.hpp>

#include <boost/asio/as_tuple.hpp>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/connect.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/read_until.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/asio/write.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>
#include <boost/json.hpp>
#include <catch2/catch.hpp>

#include <algorithm>
#include <array>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <fstream>
#include <functional>
#include <map>
#include <mutex>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

namespace asio = boost::asio;
namespace json = boost::json;
using tcp = asio::ip::tcp;
using namespace board;
using namespace board::http;
using namespace board::http_test;

namespace {

// --- an SSE client -------------------------------------------------------------------------

struct Frame {
    std::string event, id, data;
};

/// Reads frames from an open event stream until `done(frames)` or the connection ends.
struct SseClient {
    std::vector<Frame> frames;
    bool connected = false;
    bool counted = false;
    std::string error;

    asio::awaitable<void> run(unsigned short port,
                              std::string target,
                              std::string last_event_id,
                              std::function<bool(const std::vector<Frame>&)> done) {
        auto ex = co_await asio::this_coro::executor;
        tcp::socket socket(ex);
        auto [cec] =
            co_await socket.async_connect(tcp::endpoint{asio::ip::make_address("127.0.0.1"), port},
                                          asio::as_tuple(asio::use_awaitable));
        if (cec) {
            error = cec.message();
            co_return;
        }
        std::string request = "GET " + target +
                              " HTTP/1.1\r\nHost: 127.0.0.1:" + std::to_string(port) +
                              "\r\nAccept: text/event-stream\r\n";
        if (!last_event_id.empty()) request += "Last-Event-ID: " + last_event_id + "\r\n";
        request += "\r\n";
        auto [wec, wn] = co_await asio::async_write(
            socket, asio::buffer(request), asio::as_tuple(asio::use_awaitable));
        if (wec) co_return;
        std::string buffer;
        bool header_done = false;
        char chunk[8192];
        for (;;) {
            auto [ec, n] = co_await socket.async_read_some(asio::buffer(chunk),
                                                           asio::as_tuple(asio::use_awaitable));
            if (ec) break;
            buffer.append(chunk, n);
            if (!header_done) {
                const auto end = buffer.find("\r\n\r\n");
                if (end == std::string::npos) continue;
                if (buffer.rfind("HTTP/1.1 200", 0) != 0) {
                    error = buffer.substr(0, end);
                    break;
                }
                buffer.erase(0, end + 4);
                header_done = true;
                connected = true;
            }
            std::size_t pos;
            while ((pos = buffer.find("\n\n")) != std::string::npos) {
                Frame f;
                std::string_view block{buffer.data(), pos};
                while (!block.empty()) {
                    const auto nl = block.find('\n');
                    const auto line = block.substr(0, nl);
                    block =
                        nl == std::string_view::npos ? std::string_view{} : block.substr(nl + 1);
                    if (line.rfind("id: ", 0) == 0) f.id = std::string{line.substr(4)};
                    if (line.rfind("event: ", 0) == 0) f.event = std::string{line.substr(7)};
                    if (line.rfind("data: ", 0) == 0) f.data = std::string{line.substr(6)};
                }
                buffer.erase(0, pos + 2);
                if (!f.data.empty()) frames.push_back(std::move(f));
            }
            if (done(frames)) break;
        }
        boost::system::error_code ignored;
        socket.close(ignored);
    }
};

/// Records run 0001 (research) as started on `id` and makes its runs folder, returned.
std::filesystem::path start_research_run(const TempBoard& board, const std::string& id) {
    auto started = transact(*ticket_dir(board.dir, id), Actor{ActorKind::system, ""}, [](auto&) {
        return std::vector<Payload>{RunStarted{"0001", Status::research, 1, 1, {}, {}}};
    });
    REQUIRE(std::holds_alternative<Committed>(started));
    const auto runs = *ticket_dir(board.dir, id) / "runs";
    std::filesystem::create_directories(runs);
    return runs;
}

/// Starts run 0001 on `id` as start_research_run does and returns the file its output goes to.
std::filesystem::path research_run_log(const TempBoard& board, const std::string& id) {
    return start_research_run(board, id) / (run_file_stem("0001", Status::research) + ".log");
}

std::size_t count_events(const std::vector<Frame>& frames) {
    return static_cast<std::size_t>(std::count_if(
        frames.begin(), frames.end(), [](const Frame& f) { return f.event.empty(); }));
}

}  // namespace

// --- the feed --------------------------------------------------------------------------------

TEST_CASE("the feed numbers events across tickets and resumes only what it can prove",
          "[http][feed]") {
    TempBoard board;
    const auto a = board.create("a");
    EventFeed feed(board.dir, 100, 3);
    feed.prime();
    CHECK(feed.poll(a).empty());  // history, not news
    const auto b = board.create("b");
    board.append(a, {NoteAdded{"one"}});
    auto got = feed.poll(b);
    REQUIRE(got.size() == 1);
    CHECK(got[0].id == 100);
    CHECK(got[0].seq == 1);
    got = feed.poll(a);
    REQUIRE(got.size() == 1);
    CHECK(got[0].id == 101);
    CHECK(got[0].ticket == a);
    CHECK(got[0].seq == 2);
    CHECK(json::parse(got[0].data).at("type") == "note");
    board.append(a, {NoteAdded{"two"}, NoteAdded{"three"}});
    CHECK(feed.poll(a).size() == 2);  // ids 102, 103; the journal keeps 101..103
    CHECK(feed.last_id() == 103);
    CHECK(feed.since(103)->empty());
    CHECK(feed.since(101)->size() == 2);
    CHECK(feed.since(100)->size() == 3);
    CHECK_FALSE(feed.since(99));   // 100 fell out of the journal
    CHECK_FALSE(feed.since(104));  // from the future: another server run
    CHECK(feed.poll("../x").empty());
    CHECK(feed.changed_since_last_read().empty());
    board.append(b, {NoteAdded{"x"}});
    CHECK(feed.changed_since_last_read() == std::vector<std::string>{b});
}

// --- live events -----------------------------------------------------------------------------

TEST_CASE("SSE: 50 subscribers get 5,000 events in order - a resume gets exactly the missed",
          "[http][sse]") {
    constexpr int subscribers = 50;
    constexpr int tickets = 10;
    constexpr int batches = 50;     // per ticket
    constexpr int batch_size = 10;  // 10 tickets x 50 batches x 10 = 5,000 events
    constexpr std::size_t total = tickets * batches * batch_size;
    TempBoard board;
    std::vector<std::string> ids;
    for (int i = 0; i < tickets; ++i) ids.push_back(board.create("t" + std::to_string(i)));
    Running server(options_for(board));
    const auto port = server.port();

    asio::io_context clients;
    std::vector<SseClient> subs(subscribers);
    // How many clients have their hello: counted on the clients' thread, waited for here.
    std::mutex ready_mutex;
    std::condition_variable ready_changed;
    int ready = 0;
    const auto one_more_ready = [&] {
        {
            const std::lock_guard<std::mutex> lock{ready_mutex};
            ++ready;
        }
        ready_changed.notify_all();
    };
    for (auto& sub : subs) {
        asio::co_spawn(clients,
                       sub.run(port,
                               "/api/events",
                               "",
                               [&one_more_ready, &sub](const std::vector<Frame>& frames) {
                                   if (!frames.empty() && !sub.counted) {  // the hello
                                       sub.counted = true;
                                       one_more_ready();
                                   }
                                   return count_events(frames) >= total;
                               }),
                       asio::detached);
    }
    // A late joiner: reads 1,000, drops, and resumes from its Last-Event-ID at the end.
    SseClient early, resumed;
    asio::co_spawn(clients,
                   early.run(port,
                             "/api/events",
                             "",
                             [&](const std::vector<Frame>& frames) {
                                 if (!frames.empty() && !early.counted) {
                                     early.counted = true;
                                     one_more_ready();
                                 }
                                 return count_events(frames) >= 1000;
                             }),
                   asio::detached);
    std::thread client_thread([&] { clients.run(); });
    {
        std::unique_lock<std::mutex> lock{ready_mutex};
        REQUIRE(ready_changed.wait_for(
            lock, std::chrono::seconds(30), [&] { return ready == subscribers + 1; }));
    }

    const auto started = std::chrono::steady_clock::now();
    std::vector<EventLog> logs;
    for (const auto& id : ids) logs.emplace_back(*ticket_dir(board.dir, id));
    for (int b = 0; b < batches; ++b) {
        for (int t = 0; t < tickets; ++t) {
            auto result = logs[static_cast<std::size_t>(t)].transact(
                Actor{ActorKind::human, "alice"}, [&](const Ticket&) {
                    std::vector<Payload> notes;
                    for (int k = 0; k < batch_size; ++k)
                        notes.emplace_back(NoteAdded{"n" + std::to_string(b * batch_size + k)});
                    return notes;
                });
            REQUIRE(std::holds_alternative<Committed>(result));
            server.server.ticket_changed(ids[static_cast<std::size_t>(t)]);
        }
    }
    client_thread.join();
    const auto took = std::chrono::duration<double>(std::chrono::steady_clock::now() - started);
    WARN("5,000 events to 50 subscribers in " << took.count() << " s");

    // The first subscriber's stream is checked event by event; every other one must be the
    // same stream (parsing 250,000 frames under ASan would dominate the test's time).
    for (const auto& sub : subs) {
        REQUIRE(sub.error.empty());
        REQUIRE(count_events(sub.frames) == total);
        REQUIRE(sub.frames.size() == subs[0].frames.size());
        std::uint64_t previous = std::stoull(sub.frames[0].id);  // the hello's id
        std::map<std::string, std::int64_t> last_seq;
        for (std::size_t i = 1; i < sub.frames.size(); ++i) {
            const auto& f = sub.frames[i];
            const auto id = std::stoull(f.id);
            REQUIRE(id == previous + 1);  // every id, once, in order
            previous = id;
            if (&sub != &subs[0]) {
                REQUIRE(f.data == subs[0].frames[i].data);
                continue;
            }
            const auto data = json::parse(f.data);
            const std::string ticket = data.at("ticket").as_string().c_str();
            const auto seq = data.at("seq").as_int64();
            REQUIRE(seq == (last_seq.count(ticket) ? last_seq[ticket] : 1) + 1);
            last_seq[ticket] = seq;
            REQUIRE(data.at("event").at("seq").as_int64() == seq);
        }
    }
    // Resume: everything after the early subscriber's last id, and nothing else.
    const std::size_t seen = count_events(early.frames);  // 1,000 or a little more
    REQUIRE(seen >= 1000);
    const std::string last = early.frames.back().id;
    asio::io_context again;
    asio::co_spawn(again,
                   resumed.run(port,
                               "/api/events",
                               last,
                               [&](const std::vector<Frame>& frames) {
                                   return count_events(frames) >= total - seen;
                               }),
                   asio::detached);
    again.run();
    REQUIRE(count_events(resumed.frames) == total - seen);
    CHECK(std::stoull(resumed.frames.front().id) == std::stoull(last) + 1);
    CHECK(resumed.frames.back().id == subs[0].frames.back().id);
    CHECK(resumed.frames.front().data == subs[0].frames[seen + 1].data);
}

TEST_CASE("SSE: an unknown Last-Event-ID gets a reset - ?ticket= resumes from the log",
          "[http][sse]") {
    TempBoard board;
    const auto a = board.create("watched");
    const auto b = board.create("other");
    board.append(a, {NoteAdded{"1"}, NoteAdded{"2"}, NoteAdded{"3"}});
    auto options = options_for(board);
    options.rescan = std::chrono::milliseconds(20);  // no ticket_changed: the rescan finds it
    Running server(options);
    const auto port = server.port();

    asio::io_context io;
    SseClient reset;
    asio::co_spawn(io,
                   reset.run(port, "/api/events", "12", [](const auto& f) { return !f.empty(); }),
                   asio::detached);
    io.run();
    REQUIRE(reset.frames.size() == 1);
    CHECK(reset.frames[0].event == "reset");

    // Resumed from the log (a:3), then live: the next appends are made once a:3 has come.
    SseClient per_ticket;
    bool appended = false;
    asio::co_spawn(io,
                   per_ticket.run(port,
                                  "/api/events?ticket=" + a,
                                  a + ":2",
                                  [&](const auto& f) {
                                      if (!appended && count_events(f) >= 1) {
                                          appended = true;
                                          board.append(b, {NoteAdded{"elsewhere"}});
                                          board.append(a, {NoteAdded{"4"}, NoteAdded{"5"}});
                                      }
                                      return count_events(f) >= 4;
                                  }),
                   asio::detached);
    io.restart();
    io.run();
    CHECK(appended);
    std::vector<std::string> got;
    for (const auto& f : per_ticket.frames)
        if (f.event.empty()) got.push_back(f.id);
    CHECK(got == std::vector<std::string>{a + ":3", a + ":4", a + ":5", a + ":6"});
    CHECK(get(port, "/api/events?ticket=../x").status == 404);
}

TEST_CASE("SSE: a stream its client closes frees its connection slot at once", "[http][sse]") {
    TempBoard board;
    board.create("one");
    auto options = options_for(board);
    options.max_connections = 4;
    options.heartbeat = std::chrono::seconds(600);  // no write would notice the close for long
    Running server(options);
    const auto port = server.port();
    {
        asio::io_context io;
        std::vector<asio::ip::tcp::socket> streams;
        for (std::size_t i = 0; i < options.max_connections; ++i) {
            auto& socket = streams.emplace_back(io);
            socket.connect({asio::ip::make_address("127.0.0.1"), port});
            const std::string request =
                "GET /api/events HTTP/1.1\r\nHost: 127.0.0.1:" + std::to_string(port) + "\r\n\r\n";
            asio::write(socket, asio::buffer(request));
            std::string head;
            asio::read_until(socket, asio::dynamic_buffer(head), "\r\n\r\n");
            REQUIRE(head.rfind("HTTP/1.1 200", 0) == 0);  // streaming: the slot is taken
        }
        CHECK(get(port, "/api/tickets").status == 503);  // every slot is taken
    }                                                    // every stream closed by its client
    // Each request waits on an answer; the slots come free as the server reads each close.
    int status = 0;
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(20);
    while (status != 200 && std::chrono::steady_clock::now() < deadline)
        status = get(port, "/api/tickets").status;
    CHECK(status == 200);
}

TEST_CASE("a run's output streams from a bounded backlog, live, and ends with the run",
          "[http][runs]") {
    TempBoard board;
    const auto id = board.create("Stream it");
    const auto log = research_run_log(board, id);
    // Older than the backlog: only its last kilobyte, from a line start, is sent.
    std::ofstream(log) << std::string(100'000, 'x') << "\n"
                       << std::string(2000, 'y') << "\n"
                       << "first line\n";
    auto options = options_for(board);
    options.run_backlog = 1024;
    options.run_poll = std::chrono::milliseconds(10);
    Running server(options);

    asio::io_context io;
    SseClient live;
    bool appended = false;
    std::string text;
    asio::co_spawn(
        io,
        live.run(server.port(),
                 "/api/tickets/" + id + "/runs/0001/stream",
                 "",
                 [&](const std::vector<Frame>& frames) {
                     text.clear();
                     for (const auto& f : frames)
                         if (f.event == "output")
                             text += json::value_to<std::string>(json::parse(f.data).at("text"));
                     if (!appended && text.find("first line\n") != std::string::npos) {
                         appended = true;
                         std::ofstream(log, std::ios::app) << "second line\n";
                         auto finished = transact(
                             *ticket_dir(board.dir, id), Actor{ActorKind::system, ""}, [](auto&) {
                                 RunFinished f;
                                 f.run = "0001";
                                 f.signal = Signal::blocked;
                                 return std::vector<Payload>{f};
                             });
                         REQUIRE(std::holds_alternative<Committed>(finished));
                     }
                     return !frames.empty() && frames.back().event == "end";
                 }),
        asio::detached);
    io.run_for(std::chrono::seconds(30));
    REQUIRE(live.error.empty());
    REQUIRE(appended);
    REQUIRE_FALSE(live.frames.empty());
    CHECK(live.frames.front().event == "skipped");
    CHECK(text.find('x') == std::string::npos);  // before the backlog: not sent
    CHECK(text.find("first line\nsecond line\n") != std::string::npos);
    const auto end = json::parse(live.frames.back().data).as_array().at(0).as_object();
    CHECK(end.at("run") == "0001");
    CHECK(end.at("end") == "finished");
    CHECK(end.at("signal") == "BLOCKED");
}

TEST_CASE("a run's output stream resumes where a reconnecting client left off, nothing twice",
          "[http][runs]") {
    TempBoard board;
    const auto id = board.create("Resume it");
    const auto log = research_run_log(board, id);
    std::ofstream(log) << "one\ntwo\n";
    auto options = options_for(board);
    options.run_poll = std::chrono::milliseconds(10);
    options.run_backlog = 8;  // "one\ntwo\n" whole; of "one\ntwo\nthree\n" the last line
    Running server(options);
    const auto text_of = [](const std::vector<Frame>& frames) {
        std::string text;
        for (const auto& f : frames)
            if (f.event == "output")
                text += json::value_to<std::string>(json::parse(f.data).at("text"));
        return text;
    };
    // One connection, sending `last_id`, read until `until` has come; then it drops.
    const auto read_until = [&](const std::string& last_id, const std::string& until) {
        asio::io_context io;
        SseClient client;
        asio::co_spawn(io,
                       client.run(server.port(),
                                  "/api/tickets/" + id + "/runs/0001/stream",
                                  last_id,
                                  [&](const auto& frames) {
                                      return text_of(frames).find(until) != std::string::npos;
                                  }),
                       asio::detached);
        io.run_for(std::chrono::seconds(30));
        REQUIRE(client.error.empty());
        return client.frames;
    };

    const auto first = read_until("", "two\n");
    REQUIRE(text_of(first) == "one\ntwo\n");
    const std::string left_at = first.back().id;
    CHECK(left_at == "8");  // the bytes of the log its text reaches
    // The agent prints more while the client is away; it comes back with its last id.
    std::ofstream(log, std::ios::app) << "three\n";
    CHECK(text_of(read_until(left_at, "three\n")) == "three\n");
    // An id that is no offset of this log (another run's, a stale page's, too big a number):
    // the backlog, as for a new stream.
    for (const std::string stranger : {"999999", "99999999999999999999999", "-1"}) {
        CAPTURE(stranger);
        const auto frames = read_until(stranger, "three\n");
        CHECK(frames.front().event == "skipped");
        CHECK(text_of(frames) == "three\n");
    }
}

TEST_CASE("a live stream whose client stopped reading is closed, and its slot comes free",
          "[http][runs]") {
    TempBoard board;
    const auto id = board.create("Flood it");
    const auto runs = start_research_run(board, id);
    {
        // Far more than the kernel's buffers on both ends of a loopback connection hold.
        std::ofstream log(runs / (run_file_stem("0001", Status::research) + ".log"));
        const std::string line(1023, 'z');
        for (int i = 0; i < 32 * 1024; ++i) log << line << '\n';
    }
    auto options = options_for(board);
    options.run_backlog = 64u << 20;
    options.max_connections = 1;
    options.stream_write_timeout = std::chrono::milliseconds(300);
    Running server(options);
    const auto port = server.port();

    asio::io_context io;
    asio::ip::tcp::socket stalled(io);
    stalled.open(asio::ip::tcp::v4());
    stalled.set_option(asio::socket_base::receive_buffer_size(4096));
    stalled.connect({asio::ip::make_address("127.0.0.1"), port});
    const std::string request =
        "GET /api/tickets/" + id +
        "/runs/0001/stream HTTP/1.1\r\nHost: 127.0.0.1:" + std::to_string(port) + "\r\n\r\n";
    asio::write(stalled, asio::buffer(request));
    std::string head;
    asio::read_until(stalled, asio::dynamic_buffer(head), "\r\n\r\n");
    REQUIRE(head.rfind("HTTP/1.1 200", 0) == 0);
    // The client reads nothing more and keeps the connection open. The server gives up on it
    // after the timeout, and the one slot serves others again.
    int status = 503;
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(20);
    while (status != 200 && std::chrono::steady_clock::now() < deadline)
        status = get(port, "/api/tickets").status;
    REQUIRE(status == 200);
    // The stream was cut, not finished: reading on finds its end well short of the output.
    std::size_t received = head.size();
    boost::system::error_code ec;
    std::array<char, 65536> chunk{};
    while (!ec) received += stalled.read_some(asio::buffer(chunk), ec);
    CHECK(received < (32u << 20));
}

TEST_CASE("a run's stream refuses an unknown ticket or run with 404", "[http][runs]") {
    TempBoard board;
    const auto id = board.create("No runs");
    Running server(options_for(board));
    CHECK(get(server.port(), "/api/tickets/" + id + "/runs/0001/stream").status == 404);
    CHECK(get(server.port(), "/api/tickets/PROJ-99/runs/0001/stream").status == 404);
    CHECK(get(server.port(), "/api/tickets/x/runs/0001/stream").status == 404);
}
