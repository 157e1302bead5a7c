module example.com/outside-openrouter

go 1.19
