#pragma once
// Dear ImGui inside a Qt OpenGL widget: the ImGui context and its OpenGL 3 renderer, Qt's mouse, wheel and key events
// turned into ImGui input, and the frame's start and draw. The widget owns one bridge and calls it from its
// initializeGL, event handlers and paintGL; what the frame shows is the widget's business.
//
// Input goes through io.AddMousePosEvent / AddMouseButtonEvent / AddMouseWheelEvent (Dear ImGui 1.87+) and
// io.AddKeyEvent with ImGuiMod_* (1.89+) where the ImGui version has them; older versions (Debian 12 ships 1.86) get
// the fields they read instead (io.MousePos, io.MouseDown, io.MouseWheel, io.KeyMap / io.KeysDown, io.KeyCtrl...).
//
// Text: ImGui draws with the widget's font (the application's, unless set) at its size, so the playground reads like
// the rest of the window. ImGui's rasteriser (stb_truetype) wants the font file's bytes and Qt does not say which file
// a font came from, so the bridge rebuilds the file from the tables Qt's font engine holds (QRawFont::fontTable): the
// very face Qt draws with, whatever fontconfig substituted, with no file search. A font without TrueType or CFF
// outlines (a bitmap font) falls back to ImGui's built-in font, with a warning on stderr.

#include <QByteArray>
#include <QFont>

struct ImGuiContext;
class QKeyEvent;
class QMouseEvent;
class QRawFont;
class QWheelEvent;

namespace descentlab::widgets {

class ImGuiQtBridge {
 public:
  // openGL: frames are drawn into the current framebuffer. none: frames are laid out only, for tests on platforms
  // without OpenGL (the layout is the same; nothing is drawn).
  enum class Renderer { openGL, none };

  ImGuiQtBridge() = default;
  // Calls shutdown(): hand the bridge back with the widget's OpenGL context current (see shutdown).
  ~ImGuiQtBridge();
  ImGuiQtBridge(const ImGuiQtBridge&) = delete;
  ImGuiQtBridge& operator=(const ImGuiQtBridge&) = delete;

  // Creates the ImGui context (no .ini file, the key map) with `font` rasterised at its pixel size times
  // `devicePixelRatio` and drawn at its logical size, and the renderer. With Renderer::openGL the widget's OpenGL
  // context must be current. Leaves the new ImGui context current, for the caller's style.
  void init(const QFont& font, float devicePixelRatio, Renderer renderer = Renderer::openGL);
  // Destroys the renderer and the ImGui context; the widget's OpenGL context must be current when there is an OpenGL
  // renderer. Nothing before init.
  void shutdown();
  bool ready() const { return context_ != nullptr; }
  Renderer renderer() const { return renderer_; }
  // Makes this bridge's ImGui context the current one (ImGui keeps one current context per process).
  void setCurrent() const;
  // True when ImGui draws with the widget's font, false after the fallback to ImGui's built-in one.
  bool usesWidgetFont() const { return !fontData_.isEmpty(); }

  // Qt's input into ImGui. Each returns false, forwarding nothing, before init; true when the widget should draw a
  // frame to show the effect.
  bool mouseMove(const QMouseEvent& event);
  bool mouseButton(const QMouseEvent& event, bool pressed);
  bool wheel(const QWheelEvent& event);
  // The key (when ImGui uses it), the modifiers, and on a press the text it types.
  bool key(const QKeyEvent& event, bool pressed);

  // Starts a frame of `width` x `height` logical pixels drawn at `ratio` device pixels each, `deltaSeconds` after
  // the last one; the ImGui calls of the frame follow. A ratio other than the font atlas's (the window moved to
  // another screen) rebuilds the atlas first, so text stays sharp.
  void newFrame(int width, int height, float ratio, float deltaSeconds);
  // Ends the frame and, with an OpenGL renderer, draws it into the current OpenGL framebuffer.
  void render();

 private:
  // Fills the context's font atlas for `ratio` device pixels per logical pixel.
  void buildFonts(float ratio);

  ImGuiContext* context_ = nullptr;
  Renderer renderer_ = Renderer::openGL;
  QByteArray fontData_;        // the rebuilt font file; empty: ImGui's built-in font
  float fontSizePixels_ = 13;  // logical pixels, as ImGui sizes fonts (ascent + descent)
  float fontRatio_ = 1;        // the device pixel ratio the atlas was built for
  // Before Dear ImGui 1.87 (no input queue): a press no frame has seen yet, and a release held back until one has.
  bool pressUnseen_[3] = {false, false, false};
  bool releaseDeferred_[3] = {false, false, false};
};

// The font file (an sfnt: TrueType, or OpenType with CFF outlines) rebuilt from `font`'s tables: the tables
// stb_truetype reads, behind a valid table directory. Empty when the font has no outlines stb_truetype can read.
QByteArray sfntFromRawFont(const QRawFont& font);

// The pixel size Dear ImGui needs for a font file so that its em is `emPixels` like Qt's (ImGui scales by ascent
// minus descent, Qt by the em). `emPixels` itself when the file's head or hhea table cannot be read.
float imguiSizeForEm(const QByteArray& sfnt, double emPixels);

}  // namespace descentlab::widgets
