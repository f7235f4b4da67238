// The JSON parser: what it accepts, what it rejects with which message, and that no input makes it
// crash or throw anything but gvirtus::Error.
#include "common/json.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cstdint>
#include <random>
#include <string>

#include "common/error.h"

namespace gvirtus {
namespace {

using ::testing::HasSubstr;

JsonValue parse(std::string_view text) {
  return parse_json(text, "test.json");
}

// The message of the Error that parsing `text` throws; fails the test when it parses.
std::string parse_error(std::string_view text) {
  try {
    parse(text);
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::kInvalidInput);
    return e.what();
  }
  ADD_FAILURE() << "parsed without error: " << text;
  return "";
}

TEST(Json, ParsesScalars) {
  EXPECT_TRUE(parse("null").is_null());
  EXPECT_TRUE(parse("true").as_bool());
  EXPECT_FALSE(parse(" false ").as_bool());
  EXPECT_EQ(parse("\"abc\"").as_string(), "abc");
  EXPECT_DOUBLE_EQ(parse("1.5").as_double(), 1.5);
  EXPECT_EQ(parse("true").kind(), JsonValue::Kind::kBool);
}

TEST(Json, ObjectsKeepKeyOrderAndFind) {
  const JsonValue v = parse(R"({"z": 1, "a": [true, null], "m": {"x": "y"}})");
  ASSERT_TRUE(v.is_object());
  ASSERT_EQ(v.size(), 3u);
  EXPECT_EQ(v.key(0), "z");
  EXPECT_EQ(v.key(1), "a");
  EXPECT_EQ(v.key(2), "m");
  EXPECT_EQ(v.at(0).as_uint64(), 1u);
  const JsonValue* a = v.find("a");
  ASSERT_NE(a, nullptr);
  ASSERT_TRUE(a->is_array());
  EXPECT_EQ(a->size(), 2u);
  EXPECT_TRUE((*a)[0].as_bool());
  EXPECT_TRUE((*a)[1].is_null());
  EXPECT_EQ(v.find("m")->find("x")->as_string(), "y");
  EXPECT_EQ(v.find("missing"), nullptr);
  EXPECT_EQ(a->find("x"), nullptr);  // not an object
  EXPECT_THROW(a->at(2), Error);
  EXPECT_THROW(a->key(0), Error);
}

TEST(Json, EmptyContainers) {
  EXPECT_EQ(parse("[]").size(), 0u);
  EXPECT_EQ(parse("{ }").size(), 0u);
  EXPECT_EQ(parse("[[],{}]").size(), 2u);
}

TEST(Json, ValuesAreCopyable) {
  JsonValue copy;
  {
    const JsonValue original = parse(R"({"k": ["v"]})");
    copy = original;
  }
  EXPECT_EQ(copy.find("k")->at(0).as_string(), "v");
}

TEST(Json, WrongKindAccessorsThrowError) {
  EXPECT_THROW(parse("1").as_string(), Error);
  EXPECT_THROW(parse("\"x\"").as_bool(), Error);
  EXPECT_THROW(parse("null").as_double(), Error);
  EXPECT_FALSE(parse("\"1\"").as_uint64().has_value());
}

TEST(Json, StringEscapes) {
  EXPECT_EQ(parse(R"("a\"b\\c\/d\be\ff\ng\rh\ti")").as_string(), "a\"b\\c/d\be\ff\ng\rh\ti");
  EXPECT_EQ(parse(R"("\u0041\u00e9\u20AC")").as_string(), "A\xC3\xA9\xE2\x82\xAC");
  EXPECT_EQ(parse(R"("\u0000")").as_string(), std::string(1, '\0'));
}

TEST(Json, SurrogatePairsBecomeUtf8) {
  EXPECT_EQ(parse(R"("\ud83d\ude00")").as_string(), "\xF0\x9F\x98\x80");  // U+1F600
  EXPECT_EQ(parse(R"("\uDBFF\uDFFF")").as_string(), "\xF4\x8F\xBF\xBF");  // U+10FFFF
  EXPECT_THAT(parse_error(R"("\ud83d")"), HasSubstr("surrogate"));
  EXPECT_THAT(parse_error(R"("\ud83dx")"), HasSubstr("surrogate"));
  EXPECT_THAT(parse_error(R"("\ud83d\u0041")"), HasSubstr("low surrogate"));
  EXPECT_THAT(parse_error(R"("\ude00")"), HasSubstr("unpaired low surrogate"));
}

TEST(Json, RawUtf8IsKeptAndValidated) {
  EXPECT_EQ(parse("\"caf\xC3\xA9 \xF0\x9F\x98\x80\"").as_string(), "caf\xC3\xA9 \xF0\x9F\x98\x80");
  EXPECT_THAT(parse_error("\"\xC3\""), HasSubstr("invalid UTF-8"));          // truncated
  EXPECT_THAT(parse_error("\"\xC0\xAF\""), HasSubstr("invalid UTF-8"));      // overlong
  EXPECT_THAT(parse_error("\"\xED\xA0\x80\""), HasSubstr("invalid UTF-8"));  // surrogate
  EXPECT_THAT(parse_error("\"\xFF\""), HasSubstr("invalid UTF-8"));
}

TEST(Json, RejectsInvalidEscapesAndControlCharacters) {
  EXPECT_THAT(parse_error(R"("\x41")"), HasSubstr("invalid escape \\'x'"));
  EXPECT_THAT(parse_error(R"("\u12G4")"), HasSubstr("hex digits"));
  EXPECT_THAT(parse_error("\"a\nb\""), HasSubstr("control character"));
  EXPECT_THAT(parse_error("\"a\tb\""), HasSubstr("control character"));
  EXPECT_THAT(parse_error("\"abc"), HasSubstr("unterminated string"));
}

TEST(Json, IntegersAreExact) {
  EXPECT_EQ(parse("0").as_uint64(), 0u);
  EXPECT_EQ(parse("18446744073709551615").as_uint64(), UINT64_MAX);
  EXPECT_FALSE(parse("18446744073709551615").as_int64().has_value());
  EXPECT_TRUE(parse("18446744073709551615").is_integer());
  EXPECT_EQ(parse("9007199254740993").as_uint64(), 9007199254740993u);  // not exact as a double
  EXPECT_EQ(parse("-42").as_int64(), -42);
  EXPECT_FALSE(parse("-42").as_uint64().has_value());
  EXPECT_EQ(parse("-9223372036854775808").as_int64(), INT64_MIN);
  EXPECT_EQ(parse("9223372036854775807").as_int64(), INT64_MAX);
  EXPECT_FALSE(parse("-9223372036854775809").as_int64().has_value());
  // Past uint64: still a number, but not an exact integer.
  const JsonValue big = parse("18446744073709551616");
  EXPECT_TRUE(big.is_number());
  EXPECT_FALSE(big.is_integer());
  EXPECT_FALSE(big.as_uint64().has_value());
  EXPECT_DOUBLE_EQ(big.as_double(), 18446744073709551616.0);
}

TEST(Json, FractionsAndExponents) {
  EXPECT_DOUBLE_EQ(parse("-0.25").as_double(), -0.25);
  EXPECT_DOUBLE_EQ(parse("1e3").as_double(), 1000.0);
  EXPECT_DOUBLE_EQ(parse("1E+3").as_double(), 1000.0);
  EXPECT_DOUBLE_EQ(parse("25e-2").as_double(), 0.25);
  EXPECT_FALSE(parse("1e3").is_integer());
  EXPECT_FALSE(parse("1.0").as_uint64().has_value());
  EXPECT_EQ(parse("1.50").describe(), "1.50");  // as written
}

TEST(Json, RejectsMalformedNumbers) {
  EXPECT_THAT(parse_error("01"), HasSubstr("leading zeros"));
  EXPECT_THAT(parse_error("-"), HasSubstr("expected a digit after '-'"));
  EXPECT_THAT(parse_error("1."), HasSubstr("expected a digit after '.'"));
  EXPECT_THAT(parse_error("1e"), HasSubstr("exponent"));
  EXPECT_THAT(parse_error("+1"), HasSubstr("expected a value, found '+'"));
  EXPECT_THAT(parse_error(".5"), HasSubstr("expected a value"));
  EXPECT_THAT(parse_error("1e999"), HasSubstr("out of range"));
}

TEST(Json, RejectsNanAndInfinity) {
  EXPECT_THAT(parse_error("NaN"), HasSubstr("'NaN' (not allowed in JSON)"));
  EXPECT_THAT(parse_error("[Infinity]"), HasSubstr("'Infinity' (not allowed in JSON)"));
  EXPECT_THAT(parse_error("-Infinity"), HasSubstr("expected a digit after '-'"));
  EXPECT_THAT(parse_error("nul"), HasSubstr("found 'nul'"));
}

TEST(Json, ErrorsCarrySourceLineAndColumn) {
  EXPECT_EQ(parse_error("{\n  \"a\": 1,\n  \"b\" 2\n}"),
            "test.json:3:7: expected ':' after object key, found '2'");
  EXPECT_EQ(parse_error("[1,\n\n   ]"), "test.json:3:4: expected a value, found ']'");
  // Columns count characters: the two-byte \xC3\xA9 is one column.
  EXPECT_EQ(parse_error("[\"\xC3\xA9\" x]"),
            "test.json:1:6: expected ',' or ']' in array, found 'x'");
  EXPECT_EQ(parse_error(""), "test.json:1:1: expected a value, found end of input");
}

TEST(Json, ValuesRememberWhereTheyStart) {
  const JsonValue v = parse("{\n  \"a\": [10,\n    \"x\"]}");
  EXPECT_EQ(v.line(), 1);
  EXPECT_EQ(v.column(), 1);
  const JsonValue& a = *v.find("a");
  EXPECT_EQ(a.line(), 2);
  EXPECT_EQ(a.column(), 8);
  EXPECT_EQ(a[0].column(), 9);
  EXPECT_EQ(a[1].line(), 3);
  EXPECT_EQ(a[1].column(), 5);
}

TEST(Json, DepthLimit) {
  const std::string ok = std::string(kMaxJsonDepth, '[') + std::string(kMaxJsonDepth, ']');
  EXPECT_TRUE(parse(ok).is_array());
  const std::string deep =
      std::string(kMaxJsonDepth + 1, '[') + std::string(kMaxJsonDepth + 1, ']');
  EXPECT_THAT(parse_error(deep), HasSubstr("nesting deeper than 64"));
  // Far past the limit: an error, not a stack overflow.
  EXPECT_THAT(parse_error(std::string(1000000, '{')), HasSubstr("expected a string key"));
  EXPECT_THAT(parse_error(std::string(1000000, '[')), HasSubstr("nesting deeper than 64"));
}

TEST(Json, DuplicateKeysAreNamed) {
  EXPECT_EQ(parse_error("{\"port\": 1,\n \"port\": 2}"), "test.json:2:2: duplicate key \"port\"");
  // The same key in sibling objects is fine.
  EXPECT_EQ(parse(R"([{"a":1},{"a":2}])").size(), 2u);
}

TEST(Json, RejectsTrailingGarbageAndOtherSyntaxErrors) {
  EXPECT_THAT(parse_error("{} x"), HasSubstr("expected end of input after the value, found 'x'"));
  EXPECT_THAT(parse_error("1 2"), HasSubstr("expected end of input"));
  EXPECT_THAT(parse_error("[1,]"), HasSubstr("expected a value, found ']'"));
  EXPECT_THAT(parse_error("{\"a\":1,}"), HasSubstr("expected a string key"));
  EXPECT_THAT(parse_error("{a:1}"), HasSubstr("expected a string key in object, found 'a'"));
  EXPECT_THAT(parse_error("// c\n{}"), HasSubstr("expected a value, found '/'"));
  EXPECT_THAT(parse_error(std::string("{}\0", 3)), HasSubstr("found byte 0x00"));
  EXPECT_THAT(parse_error("[1 2]"), HasSubstr("expected ',' or ']' in array"));
}

TEST(Json, SkipsByteOrderMark) {
  EXPECT_TRUE(parse("\xEF\xBB\xBF{}").is_object());
}

TEST(Json, DescribeIsShort) {
  EXPECT_EQ(parse("null").describe(), "null");
  EXPECT_EQ(parse("true").describe(), "true");
  EXPECT_EQ(parse("42").describe(), "42");
  EXPECT_EQ(parse("\"a\\\"b\\n\"").describe(), "\"a\\\"b\\n\"");
  EXPECT_EQ(parse("[1]").describe(), "an array");
  EXPECT_EQ(parse("[]").describe(), "an empty array");
  EXPECT_EQ(parse("{\"a\":1}").describe(), "an object");
  EXPECT_EQ(parse("{}").describe(), "an empty object");
  EXPECT_EQ(parse('"' + std::string(1000, 'x') + '"').describe(),
            '"' + std::string(40, 'x') + "...\"");
}

// Parsing must end in a value or a gvirtus::Error: never a crash, a hang or another exception.
void parse_or_error(std::string_view text) {
  try {
    parse(text);
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::kInvalidInput);
  }
}

const char kSample[] = R"({ "communicator": [ { "endpoint": { "suite": "tcp/ip", "port": "9999",
  "n": -12.5e-3, "big": 18446744073709551615, "esc": "\u00e9\ud83d\ude00\n" },
  "plugins": ["cudart", null, true, false, [], {}] } ], "secure_application": false })";

TEST(Json, EveryPrefixParsesOrFails) {
  const std::string doc = kSample;
  ASSERT_TRUE(parse(doc).is_object());
  for (size_t n = 0; n < doc.size(); ++n) {
    EXPECT_THROW(parse(std::string_view(doc).substr(0, n)), Error) << "prefix of " << n;
  }
}

TEST(Json, RandomInputParsesOrFails) {
  std::mt19937 rng(12345);
  const std::string alphabet = "{}[]\":,.-+eE0123456789truefalsn \\u\n\t\x01\xC3\xA9\xF0\xFF";
  for (int i = 0; i < 4000; ++i) {
    const size_t len = rng() % 64;
    std::string text;
    for (size_t j = 0; j < len; ++j) {
      text += i % 2 == 0 ? static_cast<char>(rng() & 0xFF) : alphabet[rng() % alphabet.size()];
    }
    SCOPED_TRACE(testing::PrintToString(text));
    EXPECT_NO_FATAL_FAILURE(parse_or_error(text));
  }
}

TEST(Json, MutatedDocumentsParseOrFail) {
  std::mt19937 rng(54321);
  const std::string doc = kSample;
  for (int i = 0; i < 4000; ++i) {
    std::string text = doc;
    for (int k = 0; k < 1 + static_cast<int>(rng() % 4); ++k) {
      text[rng() % text.size()] = static_cast<char>(rng() & 0xFF);
    }
    SCOPED_TRACE(testing::PrintToString(text));
    parse_or_error(text);
  }
}

}  // namespace
}  // namespace gvirtus
