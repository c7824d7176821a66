// Scene files: JSON read with jansson into the protocol's Scene message. Mesh files named
// by a scene (OBJ, STL) are read here too and sent inline. The key list is in README.md
// ("Scene files"); unknown keys are errors, so a typo never passes silently. Installed:
// it names no protobuf type (the Scene message is in ccsim_scene_msg.h, not installed).
#ifndef CCSIM_SCENE_H
#define CCSIM_SCENE_H

#include <stddef.h>

typedef struct ccsim_scene ccsim_scene;

// Read and check a scene file. Returns the scene (caller owns; ccsim_scene_destroy) or
// NULL with "FILE: KEY: what is wrong" in err.
ccsim_scene *ccsim_scene_load(const char *path, char *err, size_t err_sz);

// The same from JSON text; name is used in messages, base_dir resolves relative mesh
// paths (both nullable).
ccsim_scene *ccsim_scene_parse(const char *json, size_t len, const char *name,
                               const char *base_dir, char *err, size_t err_sz);

// Free a scene and set *s to NULL. NULL-safe.
void ccsim_scene_destroy(ccsim_scene **s);

// Override the scene's mode: "compliant" or "rigid". Returns 0, or -1 for another name.
int ccsim_scene_set_mode(ccsim_scene *s, const char *mode);

// The scene's mode: "compliant" or "rigid" (a static string).
const char *ccsim_scene_mode(const ccsim_scene *s);

#endif
