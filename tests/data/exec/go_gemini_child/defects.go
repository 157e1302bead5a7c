package main

import "os"

// GOGEM_DEFECT plants one defect, for turnspec's tests of its checks:
//
//	ignore-finish     every finishReason read as STOP
//	lose-stream-args  a streamed functionCall's args dropped
//	model-in-body     the model sent in the body, not the URL path
//	drop-thinking     thought parts dropped
//	raw-signatures    a thoughtSignature on a functionCall or text part kept in the
//	                  parse's provider_raw, which no stream event carries
var defect = os.Getenv("GOGEM_DEFECT")
