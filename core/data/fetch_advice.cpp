// What a failed fetch tells the user to do, from the words of the tool that failed (core/data/fetch.h).

#include <string>

#include "core/data/fetch.h"

namespace descentlab::data {

std::string apt_failure_advice(const std::string& apt_output) {
  const auto says = [&](const char* words) { return apt_output.find(words) != std::string::npos; };
  if (says("Connection refused") || says("Could not connect") || says("Unable to connect") ||
      says("Temporary failure resolving") || says("Could not resolve") || says("Network is unreachable") ||
      says("No route to host") || says("timed out") || says("Failed to fetch")) {
    return "the package archive could not be reached: check this machine's network, proxy and apt sources "
           "(/etc/apt/sources.list, /etc/apt/sources.list.d) and try again";
  }
  if (says("Unable to locate package") || says("No packages found") || says("Can't select candidate") ||
      says("has no installation candidate")) {
    return "apt does not know the package: its package lists may be missing or old; run 'sudo apt-get update' and "
           "try again";
  }
  return "see apt's message above; 'sudo apt-get update' helps when the package lists are missing or old";
}

}  // namespace descentlab::data
