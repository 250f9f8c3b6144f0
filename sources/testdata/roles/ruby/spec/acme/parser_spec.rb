describe Acme::Parser do
end
