module Acme
  class Parser
  end
end
