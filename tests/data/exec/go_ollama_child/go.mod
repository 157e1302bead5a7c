module outside/ollama-child

go 1.19
