namespace nlohmann {}
