// A scene's protobuf Scene message: for libccsim itself, the ccsim CLI and the tests, which
// pack it into requests or compile it in-process. Not installed: the public headers name no
// protobuf type, so a program using libccsim needs none of protobuf-c's headers.
#ifndef CCSIM_SCENE_MSG_H
#define CCSIM_SCENE_MSG_H

#include "ccsim.pb-c.h"
#include "ccsim_scene.h"

// The Scene message (borrowed; valid while s lives), for packing into requests.
const Ccsim__Scene *ccsim_scene_message(const ccsim_scene *s);

#endif
