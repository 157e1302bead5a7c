module outside/gemini-child

go 1.19
