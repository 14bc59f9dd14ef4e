// Render passes (core/backend.h, RenderSpec): the checks every backend shares and the default
// Backend::render_pass for backends without a graphics pipeline (docs/design/graphics.md, "The graphics study").
#include <cstddef>
#include <cstdint>
#include <stdexcept>
#include <string>
#include <variant>

#include "backend.h"
#include "errors.h"

namespace ar {
namespace {

// The largest 2D texture (and render target) side of every Apple-family GPU; other devices check
// their own limit when they build the pass.
constexpr uint32_t kMaxSide = 16384;
// setFragmentBytes-style uniforms: small constant data only.
constexpr size_t kMaxUniformBytes = 4096;

}  // namespace

size_t render_format_bytes(const std::string& format) {
  if (format == "r8unorm") return 1;
  if (format == "rgba8unorm") return 4;
  if (format == "rgba16float") return 8;
  if (format == "rgba32float") return 16;
  throw std::invalid_argument("render-target format '" + format +
                              "' is not supported (valid: r8unorm, rgba8unorm, rgba16float, rgba32float)");
}

void check_render_spec(const RenderSpec& spec) {
  render_format_bytes(spec.format);
  if (spec.vertex.empty() || spec.fragment.empty())
    throw std::invalid_argument("a render pass needs a vertex and a fragment function name");
  auto side = [](uint32_t v, const char* what) {
    if (v < 1 || v > kMaxSide)
      throw std::invalid_argument(std::string(what) + " " + std::to_string(v) + " is out of range (valid: 1 to " +
                                  std::to_string(kMaxSide) + " pixels)");
  };
  side(spec.width, "width");
  side(spec.height, "height");
  if (spec.instances < 1) throw std::invalid_argument("instances 0 is out of range (valid: 1 or more layers)");
  if (spec.uniforms.size() * sizeof(uint32_t) > kMaxUniformBytes)
    throw std::invalid_argument("uniforms of " + std::to_string(spec.uniforms.size() * sizeof(uint32_t)) +
                                " bytes are out of range (valid: 0 to " + std::to_string(kMaxUniformBytes) + " bytes)");
  if (spec.texture.empty()) {
    if (spec.texture_size != 0)
      throw std::invalid_argument("texture_size " + std::to_string(spec.texture_size) +
                                  " given without a texture (valid: 0 when no texture is bound)");
    return;
  }
  const uint32_t s = spec.texture_size;
  if (s < 1 || s > kMaxSide || (s & (s - 1)) != 0)
    throw std::invalid_argument("texture_size " + std::to_string(s) +
                                " is out of range (valid: a power of two from 1 to " + std::to_string(kMaxSide) + ")");
  const size_t want = size_t(s) * size_t(s) * 4;
  if (spec.texture.size() != want)
    throw std::invalid_argument("texture of " + std::to_string(spec.texture.size()) +
                                " bytes does not match texture_size " + std::to_string(s) +
                                " (valid: texture_size^2 * 4 = " + std::to_string(want) + " bytes of RGBA8 texels)");
}

std::shared_ptr<RenderPass> Backend::render_pass(const RenderSpec&) {
  const Info i = info();
  auto it = i.find("backend");
  const std::string name =
      it != i.end() && std::holds_alternative<std::string>(it->second) ? std::get<std::string>(it->second) : "this";
  throw UnsupportedError("[" + name + "::render_pass] the " + name +
                         " backend has no render passes (the graphics study runs on metal:N or wgpu:N)");
}

}  // namespace ar
