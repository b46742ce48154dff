// board_http_serve BOARD_DIR [ADDRESS] [--rescan MS] [--url-file FILE]: serves the board over
// HTTP until SIGINT/SIGTERM, with no daemon. The browser test's helper; a person serves the
// page alone with `board-daemon --http PORT --no-agents`.

#include <board/http.hpp>

#include <boost/asio/io_context.hpp>
#include <boost/asio/signal_set.hpp>

#include <cstdlib>
#include <fstream>
#include <iostream>
#include <string>

int main(int argc, char** argv) {
    if (argc < 2) {
        std::cerr << "usage: board_http_serve BOARD_DIR [ADDRESS] [--rescan MS] [--url-file F]\n";
        return 2;
    }
    board::http::HttpOptions options;
    options.board = argv[1];
    std::string url_file;
    for (int i = 2; i < argc; ++i) {
        const std::string arg = argv[i];
        if (arg == "--rescan" && i + 1 < argc) {
            options.rescan = std::chrono::milliseconds(std::atoi(argv[++i]));
        } else if (arg == "--url-file" && i + 1 < argc) {
            url_file = argv[++i];
        } else {
            std::string error;
            auto address = board::http::parse_http_address(arg, error);
            if (!address) {
                std::cerr << "board_http_serve: " << error << '\n';
                return 2;
            }
            options.address = *address;
        }
    }
    boost::asio::io_context io;
    board::http::HttpServer server(io, options);
    if (auto error = server.start(); !error.empty()) {
        std::cerr << "board_http_serve: " << error << '\n';
        return 3;
    }
    if (server.token_generated())
        std::cerr << "board_http_serve: generated a token in .board/http-token\n";
    std::cout << server.page_url() << std::endl;
    if (!url_file.empty()) {
        std::ofstream out(url_file + ".tmp");
        out << server.page_url() << '\n';
        out.close();
        std::rename((url_file + ".tmp").c_str(), url_file.c_str());
    }
    boost::asio::signal_set signals(io, SIGINT, SIGTERM);
    signals.async_wait([&](auto, int) {
        server.stop();
        io.stop();
    });
    io.run();
    return 0;
}
