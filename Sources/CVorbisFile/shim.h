/* The static stdio callback tables are not wanted: sleepcycle passes its own (file descriptor) callbacks. */
#define OV_EXCLUDE_STATIC_CALLBACKS
#include <vorbis/vorbisfile.h>
