// JsonReader::choice_enum: a name maps to its own value, an absent key to the fallback, and any
// other string is refused naming the key and the valid names.
#include <catch2/catch.hpp>

#include <memory>
#include <string>

#include "sim/config/json_reader.hpp"
#include "sim/core/input_error.hpp"
#include "sim/hw/dtype.hpp"

namespace {

using trainsim::sim::JsonReader;
using trainsim::sim::JsonSource;

enum class Colour { red, green, blue };

// The reader keeps a reference to its document: `doc` must outlive it.
JsonReader reader(const nlohmann::json& doc) {
  auto source = std::make_shared<JsonSource>();
  source->file = "test.json";
  return JsonReader(doc, source);
}

Colour colour_of(JsonReader& r) {
  return r.choice_enum_or<Colour>(
      "colour", {{"red", Colour::red}, {"green", Colour::green}, {"blue", Colour::blue}},
      Colour::green);
}

}  // namespace

TEST_CASE("choice_enum maps every listed name to its own value", "[config]") {
  const std::pair<const char*, Colour> cases[] = {{R"({"colour": "red"})", Colour::red},
                                                  {R"({"colour": "green"})", Colour::green},
                                                  {R"({"colour": "blue"})", Colour::blue}};
  for (const auto& [text, colour] : cases) {
    const nlohmann::json doc = nlohmann::json::parse(text);
    JsonReader r = reader(doc);
    CHECK(colour_of(r) == colour);
    r.done();
  }
}

TEST_CASE("choice_enum_or gives the fallback for an absent key and refuses other names",
          "[config]") {
  const nlohmann::json empty = nlohmann::json::object();
  JsonReader absent = reader(empty);
  CHECK(colour_of(absent) == Colour::green);
  absent.done();

  const nlohmann::json typo = nlohmann::json::parse(R"({"colour": "gren"})");
  JsonReader wrong = reader(typo);
  try {
    (void)colour_of(wrong);
    FAIL("an unlisted name was accepted");
  } catch (const trainsim::InputError& e) {
    const std::string what = e.what();
    CHECK(what.find("colour") != std::string::npos);
    CHECK(what.find("red|green|blue") != std::string::npos);
    CHECK(what.find("did you mean 'green'") != std::string::npos);
  }
  const nlohmann::json number = nlohmann::json::parse(R"({"colour": 3})");
  JsonReader not_string = reader(number);
  CHECK_THROWS_AS(colour_of(not_string), trainsim::InputError);
}

TEST_CASE("the step precisions parse by one table everywhere", "[config]") {
  using trainsim::sim::Dtype;
  using trainsim::sim::parse_step_precision;
  for (const auto& [name, dtype] : trainsim::sim::kStepPrecisionNames) {
    CHECK(parse_step_precision(name) == dtype);
    nlohmann::json doc = nlohmann::json::object();
    doc["precision"] = name;
    JsonReader r = reader(doc);
    CHECK(r.choice_enum_in("precision", trainsim::sim::kStepPrecisionNames) == dtype);
  }
  CHECK_FALSE(parse_step_precision("int8").has_value());
  CHECK_FALSE(parse_step_precision("FP16").has_value());
  CHECK_FALSE(parse_step_precision("").has_value());
}
