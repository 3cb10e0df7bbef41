#include "jobs/cli_agreement.hpp"

#include <boost/serialization/string.hpp>
#include <boost/serialization/utility.hpp>
#include <boost/serialization/vector.hpp>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "io/archive/archive.hpp"
#include "jobs/catalog/agreement.hpp"

namespace nestfast::jobs {
namespace {

// Each option and positional of `command` as (name, what was given).
std::vector<std::pair<std::string, std::string>> given_options(const CLI::App& command) {
  std::vector<std::pair<std::string, std::string>> given;
  for (const CLI::Option* option : command.get_options()) {
    if (option->get_name() == "--help" || option->get_name() == "-h") continue;
    // What the option stands for: the given text, else its default, so
    // "--seed 1" on one rank agrees with the default 1 on another.
    std::string text = option->get_default_str();
    if (option->count() > 0) {
      text.clear();
      for (const std::string& result : option->results()) text += (text.empty() ? "" : " ") + result;
    }
    given.emplace_back(option->get_name(), "'" + text + "'");
  }
  return given;
}

}  // namespace

void agree_on_options(MPI_Comm comm, const CLI::App& command) {
  const std::vector<std::pair<std::string, std::string>> mine = given_options(command);
  std::vector<std::pair<std::string, std::string>> root = mine;
  io::broadcast_archive(comm, 0, root);
  agree(comm, [&] {
    if (root.size() != mine.size()) throw std::invalid_argument("the ranks run different commands");
    for (std::size_t i = 0; i < mine.size(); ++i) {
      if (mine[i] != root[i]) {
        throw std::invalid_argument(mine[i].first + " differs across ranks: this rank has " + mine[i].second +
                                    ", rank 0 has " + root[i].second +
                                    " (every rank of a launch must get the same options)");
      }
    }
  });
}

}  // namespace nestfast::jobs
