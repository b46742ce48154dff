#include "support/utf8.hpp"

#include <catch2/catch.hpp>

#include <string>

using namespace board;

namespace {

const std::string fffd{utf8_replacement};

}  // namespace

TEST_CASE("utf8: well-formed text is valid to its end", "[utf8]") {
    const std::string text = GENERATE(as<std::string>{},
                                      "",
                                      "ascii only",
                                      "caf\xc3\xa9",
                                      "\xe2\x82\xac 5",            // 3 bytes: euro sign
                                      "\xf0\x9f\x98\x80",          // 4 bytes: U+1F600
                                      "\xf4\x8f\xbf\xbf",          // U+10FFFF, the last
                                      "\xed\x9f\xbf\xee\x80\x80",  // U+D7FF and U+E000
                                      "\xef\xbf\xbe",              // U+FFFE: a noncharacter
                                      std::string("nul\0byte", 8));
    CHECK(valid_utf8_prefix(text) == text.size());
    CHECK(repair_utf8(text) == text);
}

TEST_CASE("utf8: the prefix ends at the first byte not part of a character", "[utf8]") {
    struct Case {
        std::string text;
        std::size_t prefix;
    };

    const Case c = GENERATE(values<Case>({
        {"ab\xff", 2},                // never in UTF-8
        {"\x80", 0},                  // a continuation byte alone
        {"x\xc0\xaf", 1},             // overlong '/'
        {"\xc1\xbf", 0},              // overlong U+007F
        {"\xe0\x9f\xbf", 0},          // overlong U+07FF
        {"\xf0\x8f\xbf\xbf", 0},      // overlong U+FFFF
        {"ok\xed\xa0\x80", 2},        // a high surrogate, U+D800
        {"\xed\xbf\xbf", 0},          // a low surrogate, U+DFFF
        {"\xf4\x90\x80\x80", 0},      // U+110000, above U+10FFFF
        {"\xf5\x80\x80\x80", 0},      // a lead byte above F4
        {"cut \xe2\x82", 4},          // a truncated euro sign
        {"\xf0\x9f\x98", 0},          // a truncated 4-byte sequence
        {"\xc3\xa9\xe2\x82x", 2},     // truncated, then ASCII
        {"\xf0\x9f\x98\x80\x80", 4},  // a stray continuation after a valid character
        {"\xe2\x82\xac\xe2\x82\xac\xfe", 6},
    }));
    CHECK(valid_utf8_prefix(c.text) == c.prefix);
}

TEST_CASE("utf8: repair replaces each invalid byte with U+FFFD and keeps the rest", "[utf8]") {
    struct Case {
        std::string text;
        std::string repaired;
    };

    const Case c = GENERATE_COPY(values<Case>({
        {"a\xff"
         "b",
         "a" + fffd + "b"},
        {"\xc0\xaf", fffd + fffd},                        // overlong '/'
        {"\xed\xa0\x80", fffd + fffd + fffd},             // a surrogate
        {"\xf4\x90\x80\x80", fffd + fffd + fffd + fffd},  // above U+10FFFF
        {"cut \xe2\x82", "cut " + fffd + fffd},           // truncated euro sign
        {"\xf0\x9f\x98\x80\x80\x80\x80x", "\xf0\x9f\x98\x80" + fffd + fffd + fffd + "x"},
        {"\xe2\x82\xe2\x82\xac", fffd + fffd + "\xe2\x82\xac"},  // resumes at the next lead
    }));
    const std::string repaired = repair_utf8(c.text);
    CHECK(repaired == c.repaired);
    CHECK(valid_utf8_prefix(repaired) == repaired.size());
}

TEST_CASE("utf8: repair makes any bytes valid", "[utf8]") {
    std::string all;
    for (int b = 0; b < 256; ++b) all += static_cast<char>(b);
    const std::string repaired = repair_utf8(all + all);
    CHECK(valid_utf8_prefix(repaired) == repaired.size());
    CHECK(repaired.substr(0, 128) == all.substr(0, 128));
}
