#include <board/sha256.hpp>

#include <catch2/catch.hpp>

TEST_CASE("SHA-256 matches the FIPS 180-4 and NIST test vectors", "[sha256]") {
    const auto [input, digest] = GENERATE(table<std::string, std::string>({
        {"", "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"},
        {"abc", "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"},
        {"abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq",
         "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1"},
        {std::string(1'000'000, 'a'),
         "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0"},
    }));
    CHECK(board::sha256_hex(input) == digest);
}

TEST_CASE("SHA-256 gives the same digest whatever the chunking", "[sha256]") {
    const std::string text(1000, 'x');
    const std::size_t chunk = GENERATE(as<std::size_t>{}, 1, 3, 63, 64, 65, 999);
    board::Sha256 hasher;
    for (std::size_t at = 0; at < text.size(); at += chunk)
        hasher.update(std::string_view{text}.substr(at, chunk));
    CHECK(hasher.hex_digest() == board::sha256_hex(text));
}
