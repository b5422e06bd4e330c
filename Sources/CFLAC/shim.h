#include <FLAC/stream_decoder.h>
